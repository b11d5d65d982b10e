package blobstore

import (
	"net/url"
	"strconv"
	"strings"
)

// SafeError returns err with the URLs that the *url.Error values in its chain quote stripped
// of their query and user information: Go's HTTP client reports a failed request with the
// whole URL, and the query of an Azure request carries the SAS token. The result unwraps to
// err, so errors.Is and errors.As still see the SDK's errors; it is err itself when there is
// nothing to strip.
func SafeError(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := msg
	for _, ue := range urlErrors(err, nil) {
		safe := safeURL(ue.URL)
		if safe == ue.URL {
			continue
		}
		clean = strings.ReplaceAll(clean, strconv.Quote(ue.URL), strconv.Quote(safe))
		clean = strings.ReplaceAll(clean, ue.URL, safe)
	}
	if clean == msg {
		return err
	}
	return &safeError{msg: clean, err: err}
}

type safeError struct {
	msg string
	err error
}

func (e *safeError) Error() string { return e.msg }
func (e *safeError) Unwrap() error { return e.err }

// urlErrors appends every *url.Error in err's tree to out.
func urlErrors(err error, out []*url.Error) []*url.Error {
	for err != nil {
		if ue, ok := err.(*url.Error); ok {
			out = append(out, ue)
		}
		switch e := err.(type) {
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				out = urlErrors(inner, out)
			}
			return out
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		default:
			return out
		}
	}
	return out
}

// safeURL returns s without user information, query or fragment; an unparsable s is cut at
// its first '?' or '#' and after its last '@' before the path.
func safeURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		if i := strings.IndexAny(s, "?#"); i >= 0 {
			s = s[:i]
		}
		if i := strings.Index(s, "://"); i >= 0 {
			rest := s[i+3:]
			end := strings.IndexByte(rest, '/')
			if end < 0 {
				end = len(rest)
			}
			if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
				s = s[:i+3] + rest[at+1:]
			}
		}
		return s
	}
	if u.User == nil && u.RawQuery == "" && !u.ForceQuery && u.Fragment == "" {
		return s
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}
