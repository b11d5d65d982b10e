package deltalog

import (
	"fmt"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/deltavacuum/deltavacuum/internal/azurehost"

	"github.com/deltavacuum/deltavacuum/storage"
)

// Root is a table root URI, parsed once, against which absolute log paths are relativised.
type Root struct {
	scheme    string // normalised scheme family
	authority string // normalised host (and user info for Azure containers)
	path      string // decoded, no trailing '/'
	// resolve, when set, finds an absolute local path outside path as spelled that is inside
	// the root once links are resolved (storage.PathResolver).
	resolve func(absPath string) (key string, inside bool)
}

// RootOf is the root of the table in store: ParseRoot of its location, with the store's
// resolver of other spellings of the root (a local directory reached through links), if it
// has one.
func RootOf(store storage.Store) (Root, error) {
	r, err := ParseRoot(store.Location())
	if err != nil {
		return r, err
	}
	if pr, ok := store.(storage.PathResolver); ok && r.scheme == "file" {
		r.resolve = pr.ResolvePath
	}
	return r, nil
}

// ParseRoot parses a table location such as file:///data/t, s3://bucket/t or
// abfss://c@acct.dfs.core.windows.net/t.
func ParseRoot(location string) (Root, error) {
	u, err := url.Parse(location)
	if err != nil {
		return Root{}, fmt.Errorf("table location %q: %w", location, err)
	}
	return Root{scheme: schemeFamily(u.Scheme), authority: authority(u), path: strings.TrimSuffix(u.Path, "/")}, nil
}

func schemeFamily(s string) string {
	switch s = strings.ToLower(s); s {
	case "s3", "s3a", "s3n":
		return "s3"
	case "abfs", "abfss", "wasb", "wasbs", "az":
		return "abfs"
	case "gs", "gcs":
		return "gs"
	}
	return s
}

func authority(u *url.URL) string {
	if u.User != nil {
		return NormalizeAuthority(u.Scheme, u.User.Username(), u.Host, true)
	}
	if strings.EqualFold(u.Scheme, "file") && strings.EqualFold(u.Host, "localhost") {
		// file://localhost/p is file:///p (RFC 8089): one file, two spellings.
		return ""
	}
	return NormalizeAuthority(u.Scheme, "", u.Host, false)
}

// SchemeFamily maps the schemes that name one storage to one name: s3/s3a/s3n, the Azure
// schemes (abfs, abfss, wasb, wasbs, az), gs/gcs.
func SchemeFamily(s string) string { return schemeFamily(s) }

// NormalizeAuthority normalises the authority of a URI of the given scheme for comparison:
// the host in lower case, and for the Azure schemes the Blob and DFS hosts of one account (or
// of OneLake) alike, wherever Microsoft documents the twin (azurehost: the public cloud, Azure
// in China, Azure Government, DNS-zone endpoints, OneLake and its regions). Another scheme's
// host is never mapped: an S3 bucket may be named like an Azure host.
func NormalizeAuthority(scheme, user, host string, hasUser bool) string {
	host = strings.ToLower(host)
	if schemeFamily(scheme) == "abfs" {
		name, port := host, ""
		if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
			name, port = host[:i], host[i:]
		}
		if h, ok := azurehost.Parse(name); ok {
			host = h.DFS() + port
		}
	}
	if hasUser {
		return user + "@" + host
	}
	return host
}

// HasScheme reports whether p starts with a URI scheme ("file:", "s3://", ...).
func HasScheme(p string) bool { return hasScheme(p) }

func hasScheme(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 1 && c == ':': // one letter followed by ':' is a Windows drive, not a scheme
			return true
		default:
			return false
		}
	}
	return false
}

// pathByte classifies the bytes of log paths in one table, since log replay looks at every
// byte of every path (it is on the hot path):
//   - byteInvalid: the characters no URI may hold and no writer leaves unescaped: control
//     characters, braces (unfilled templates), backslashes and double quotes. Other characters
//     outside RFC 2396 (spaces, '|', non-ASCII letters) are tolerated: some writers do not
//     escape them, and they name one key unambiguously;
//   - bytePercent: '%', an escape to decode (and a path another writer may not have meant to
//     escape);
//   - byteOther: '#', '?' and '+', which readers and writers take differently;
//   - byteHigh: the bytes of multi-byte UTF-8 (NFC and NFD, and a UTF-8 check).
const (
	byteInvalid = 1 << iota
	bytePercent
	byteOther
	byteHigh

	byteAmbiguous = bytePercent | byteOther | byteHigh
)

var pathByte = func() (t [256]uint8) {
	for c := 0; c < 0x20; c++ {
		t[c] = byteInvalid
	}
	for _, c := range []byte{0x7f, '{', '}', '\\', '"'} {
		t[c] = byteInvalid
	}
	t['%'] = bytePercent
	t['#'], t['?'], t['+'] = byteOther, byteOther, byteOther
	for c := 0x80; c < 0x100; c++ {
		t[c] = byteHigh
	}
	return t
}()

// classify checks a log path in one pass: no invalid byte, every '%' followed by two hex
// digits, valid UTF-8. It returns the classes of the bytes it holds.
func classify(p string) (uint8, error) {
	var seen uint8
	for i := 0; i < len(p); i++ {
		c := pathByte[p[i]]
		if c == 0 {
			continue
		}
		switch {
		case c&byteInvalid != 0:
			return 0, fmt.Errorf("%w: %q is not a valid URI (character %q)", ErrBadPath, p, p[i])
		case c&bytePercent != 0 && (i+2 >= len(p) || !isHex(p[i+1]) || !isHex(p[i+2])):
			return 0, fmt.Errorf("%w: %q has an invalid percent escape", ErrBadPath, p)
		}
		seen |= c
	}
	if seen&byteHigh != 0 && !utf8.ValidString(p) {
		return 0, fmt.Errorf("%w: %q is not valid UTF-8", ErrBadPath, p)
	}
	return seen, nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// Key decodes a path from the log (an RFC 2396 URI, relative or absolute) into the raw key it
// names relative to the table root. inside is false for an absolute path outside the root.
// A bad percent escape, a path that escapes the root, or one that is not in canonical form
// (empty, "." or ".." components) is ErrBadPath: such a log cannot be trusted.
func (r Root) Key(logPath string) (key string, inside bool, err error) {
	key, inside, _, err = r.key(logPath)
	return key, inside, err
}

// key is Key, and reports whether the path holds a character that can be read in more than
// one way (then OtherReadings has work to do).
func (r Root) key(logPath string) (key string, inside, ambiguous bool, err error) {
	if logPath == "" {
		return "", false, false, fmt.Errorf("%w: empty path", ErrBadPath)
	}
	classes, err := classify(logPath)
	if err != nil {
		return "", false, false, err
	}
	ambiguous = classes&byteAmbiguous != 0
	key, inside, err = r.decode(logPath, classes)
	return key, inside, ambiguous, err
}

// decode is Key for a path that classify accepted.
func (r Root) decode(logPath string, classes uint8) (key string, inside bool, err error) {
	if hasScheme(logPath) {
		u, err := url.Parse(logPath)
		if err != nil {
			return "", false, fmt.Errorf("%w: %q: %v", ErrBadPath, logPath, err)
		}
		if u.Opaque != "" {
			return "", false, fmt.Errorf("%w: %q is not a hierarchical URI", ErrBadPath, logPath)
		}
		if schemeFamily(u.Scheme) != r.scheme || authority(u) != r.authority {
			return "", false, nil
		}
		p := u.Path
		if p != path.Clean(p) {
			return "", false, fmt.Errorf("%w: %q is not a canonical path", ErrBadPath, logPath)
		}
		rel, ok := strings.CutPrefix(p, r.path+"/")
		if (!ok || rel == "") && r.resolve != nil {
			// The same directory by another path: the table read through a link above it,
			// or the log written through one.
			if k, in := r.resolve(p); in && cleanRelative(k) {
				rel, ok = k, true
			}
		}
		if !ok || rel == "" {
			return "", false, nil
		}
		if !utf8.ValidString(rel) {
			return "", false, fmt.Errorf("%w: %q decodes to a name that is not valid UTF-8", ErrBadPath, logPath)
		}
		return rel, true, nil
	}
	if strings.HasPrefix(logPath, "/") {
		// An absolute path without a scheme: same file system as the root.
		return r.Key(r.scheme + "://" + r.authority + logPath)
	}
	rel := logPath
	if classes&bytePercent != 0 {
		if rel, err = url.PathUnescape(logPath); err != nil {
			return "", false, fmt.Errorf("%w: %q: %v", ErrBadPath, logPath, err)
		}
		if !utf8.ValidString(rel) {
			return "", false, fmt.Errorf("%w: %q decodes to a name that is not valid UTF-8", ErrBadPath, logPath)
		}
	}
	if !cleanRelative(rel) {
		return "", false, fmt.Errorf("%w: %q escapes the table root or is not in canonical form", ErrBadPath, logPath)
	}
	return rel, true, nil
}

// OtherReadings returns the keys inside the table, other than key (what Key returned for
// logPath), that logPath can also be read as: writers and readers disagree on some spellings,
// and VACUUM must keep the file whichever reading names it (section 7). The readings are
//   - '#' and '?' as URI delimiters (Hadoop's reading: the file is the path before them) or as
//     characters of the name (what a writer that does not escape them meant);
//   - percent escapes decoded (the protocol) or kept as they are (a writer that did not escape
//     a name holding '%', such as Spark's own on-disk partition folder p=a%3Ab);
//   - '+' as itself or as a space (a writer that form-encoded the path);
//   - each of those in Unicode normalization forms C and D (one file on macOS and SMB shares,
//     whichever form its name was written in).
//
// It returns nil for the common path that has none of '%', '#', '?', '+' or non-ASCII.
func (r Root) OtherReadings(logPath, key string) []string {
	if classes, err := classify(logPath); err != nil || classes&byteAmbiguous == 0 {
		return nil
	}
	var out []string
	seen := map[string]bool{key: true}
	keep := func(k string) {
		if k != "" && !seen[k] && cleanRelative(k) && utf8.ValidString(k) {
			seen[k] = true
			out = append(out, k)
		}
	}
	spellings := []string{logPath}
	if strings.Contains(logPath, "%") {
		spellings = append(spellings, strings.ReplaceAll(logPath, "%", "%25"))
	}
	if strings.Contains(logPath, "+") {
		for _, sp := range spellings {
			spellings = append(spellings, strings.ReplaceAll(sp, "+", "%20"))
		}
	}
	for _, sp := range spellings {
		for _, v := range []string{sp, literalDelimiters(sp), cutDelimiters(sp)} {
			if k, inside, err := r.Key(v); err == nil && inside {
				keep(k)
			}
		}
	}
	for _, k := range append([]string{key}, out...) {
		if !isASCII(k) {
			keep(norm.NFC.String(k))
			keep(norm.NFD.String(k))
		}
	}
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// literalDelimiters escapes '#' and '?' so that a URI parser reads them as part of the path.
func literalDelimiters(p string) string {
	if !strings.ContainsAny(p, "#?") {
		return p
	}
	return strings.NewReplacer("#", "%23", "?", "%3F").Replace(p)
}

// cutDelimiters drops a query and fragment, as a URI parser does.
func cutDelimiters(p string) string {
	if i := strings.IndexAny(p, "#?"); i >= 0 {
		return p[:i]
	}
	return p
}

func cleanRelative(p string) bool {
	if p == "" || p[0] == '/' || p[len(p)-1] == '/' {
		return false
	}
	for start, i := 0, 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			if c := p[start:i]; c == "" || c == "." || c == ".." {
				return false
			}
			start = i + 1
		}
	}
	return true
}

const z85Alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

var z85Decode = func() [256]int16 {
	var t [256]int16
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(z85Alphabet); i++ {
		t[z85Alphabet[i]] = int16(i)
	}
	return t
}()

// z85UUID decodes 20 Z85 characters into the UUID they encode.
func z85UUID(s string) (string, error) {
	if len(s) != 20 {
		return "", fmt.Errorf("z85 UUID must be 20 characters, got %d", len(s))
	}
	var b [16]byte
	for i := 0; i < 4; i++ {
		var v uint64
		for j := 0; j < 5; j++ {
			d := z85Decode[s[i*5+j]]
			if d < 0 {
				return "", fmt.Errorf("invalid z85 character %q", s[i*5+j])
			}
			v = v*85 + uint64(d)
		}
		if v > 0xFFFFFFFF {
			return "", fmt.Errorf("invalid z85 group %q", s[i*5:i*5+5])
		}
		b[i*4], b[i*4+1], b[i*4+2], b[i*4+3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	}
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// DVKey returns the key of the file a deletion vector lives in, relative to the table root.
// ok is false when it has no file in the table (inline, or an absolute path outside the root).
// An unknown storage type is an error: this program will not guess where such a file is.
func (r Root) DVKey(dv *DeletionVector) (key string, ok bool, err error) {
	if dv == nil {
		return "", false, nil
	}
	switch dv.StorageType {
	case "i":
		return "", false, nil
	case "u":
		s := dv.PathOrInlineDv
		if len(s) < 20 {
			return "", false, fmt.Errorf("%w: deletion vector %q is too short", ErrBadPath, s)
		}
		id, err := z85UUID(s[len(s)-20:])
		if err != nil {
			return "", false, fmt.Errorf("%w: deletion vector %q: %v", ErrBadPath, s, err)
		}
		name := "deletion_vector_" + id + ".bin"
		prefix := s[:len(s)-20]
		if prefix == "" {
			return name, true, nil
		}
		key := prefix + "/" + name
		if !cleanRelative(key) {
			return "", false, fmt.Errorf("%w: deletion vector prefix %q", ErrBadPath, prefix)
		}
		return key, true, nil
	case "p":
		return r.Key(dv.PathOrInlineDv)
	}
	return "", false, fmt.Errorf("%w: unknown deletion vector storage type %q", ErrUnsupportedFeatures, dv.StorageType)
}
