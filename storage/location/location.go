// Package location opens the storage backend for a table URI: a local path or file:// URI,
// s3:// or s3a:// (S3 and S3-compatible stores), gs:// (Google Cloud Storage), and the Azure
// forms: abfss:// and abfs:// (ADLS Gen2 and OneLake), wasbs:// and wasb://, az:// and
// azure://, and https:// URLs of Blob, DFS and OneLake endpoints. Settings come from
// Options (--storage-option KEY=VALUE) and the environment; see Keys and storage/README.md.
//
// Secrets never appear in a store's Location, in Options.String, or in the errors of this
// package. Requests, and so credentials, go only to the host a URI or an endpoint option
// names, or to its Blob or DFS twin where Microsoft documents one (azure.ParseHost); a host
// whose Blob endpoint cannot be known is refused, never guessed.
package location

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/deltavacuum/deltavacuum/internal/azurehost"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/storage/ratelimit"
)

// Open returns the store at uri, with opts completed by the environment (Options.WithEnv).
// It makes no request, except to find an S3 bucket's region when none is configured. An
// object-store location needs its backend linked into the program (see Register).
func Open(ctx context.Context, uri string, opts Options) (storage.Store, error) {
	open, err := Resolve(uri, opts.WithEnv(os.Getenv))
	if err != nil {
		return nil, err
	}
	return open(ctx)
}

// Kind is the backend a URI maps to: "local", "s3", "azure" or "gcs".
func Kind(uri string) (string, error) {
	t, err := parse(uri)
	if err != nil {
		return "", err
	}
	return t.kind, nil
}

// target is a parsed URI.
type target struct {
	kind string
	path string // local
	u    *url.URL
}

// SafeURI returns uri without what may be secret in it: a password, a query (a SAS token).
func SafeURI(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme == "" || len(u.Scheme) == 1 {
		if i := strings.IndexAny(uri, "?#"); i >= 0 {
			return uri[:i]
		}
		return uri
	}
	return safe(u)
}

// SafeURL is SafeURI of a parsed URI.
func SafeURL(u *url.URL) string { return safe(u) }

func safe(u *url.URL) string {
	c := *u
	c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = "", false, "", ""
	if c.User != nil {
		c.User = url.User(c.User.Username())
	}
	return strings.TrimSuffix(c.String(), "/")
}

func parse(uri string) (*target, error) {
	if uri == "" {
		return nil, errors.New("no location given")
	}
	i := strings.Index(uri, "://")
	if !strings.HasPrefix(uri, "file:") && (i <= 1 || strings.ContainsAny(uri[:i], "/\\.")) {
		return &target{kind: "local", path: uri}, nil // a path (C:\... has a one-letter "scheme")
	}
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("location %q is not a valid URI", SafeURI(uri))
	}
	t := &target{u: u}
	switch strings.ToLower(u.Scheme) {
	case "file":
		p, err := LocalPath(uri)
		if err != nil {
			return nil, err
		}
		t.kind, t.path = "local", p
	case "s3", "s3a":
		t.kind = "s3"
	case "gs":
		t.kind = "gcs"
	case "abfs", "abfss", "wasb", "wasbs", "az", "azure", "adl":
		t.kind = "azure"
	case "http", "https":
		if u.User != nil {
			return nil, fmt.Errorf("location %s: an http(s) URL must carry no user information (its host is %s, after the '@'); "+
				"give credentials with --storage-option, and another Blob endpoint with azure_endpoint", safe(u), u.Hostname())
		}
		if !isAzureHost(u.Hostname()) {
			return nil, fmt.Errorf("location %s: an http(s) URL must be an Azure Blob, DFS or OneLake endpoint (ACCOUNT.blob.core.windows.net, ACCOUNT.zNN.blob.storage.azure.net, onelake.dfs.fabric.microsoft.com, ...); "+
				"for another Blob endpoint use az://CONTAINER/PATH with --storage-option azure_endpoint=https://HOST; for S3-compatible or GCS emulators use s3:// or gs:// with an endpoint option", safe(u))
		}
		t.kind = "azure"
	default:
		return nil, fmt.Errorf("location %s: unsupported scheme %q (local path, file://, s3://, s3a://, gs://, abfss://, abfs://, wasbs://, wasb://, az://, https://)", safe(u), u.Scheme)
	}
	if t.kind != "local" {
		if err := checkObjectPath(uri, u, t.kind == "azure"); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// checkObjectPath refuses an object-store location that another reader could take for
// another prefix: a '#' (the rest would be dropped as a fragment), a query where none is read
// (only Azure locations take one: a shared access signature, with its sig parameter), and
// empty, "." or ".." path components, which object stores keep as they are while the log's
// absolute paths are compared cleaned.
func checkObjectPath(uri string, u *url.URL, azure bool) error {
	if u.Fragment != "" || strings.Contains(uri, "#") {
		return fmt.Errorf("location %s: '#' starts a fragment, which a table location does not take; write it as %%23 if it is part of the path", SafeURI(uri))
	}
	if u.RawQuery != "" || u.ForceQuery {
		q, err := url.ParseQuery(u.RawQuery)
		if !azure || err != nil || !q.Has("sig") {
			return fmt.Errorf("location %s: '?' starts a query, which a %s:// location takes only for an Azure shared access signature (sv=…&sig=…); give settings with --storage-option, and write '?' as %%3F if it is part of the path", SafeURI(uri), strings.ToLower(u.Scheme))
		}
	}
	p := strings.TrimSuffix(strings.TrimPrefix(u.Path, "/"), "/")
	if p == "" {
		return nil
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." {
			return fmt.Errorf("location %s: the path %q has an empty, '.' or '..' component; object stores keep such keys as they are, so it would name another prefix than the table's: write the path without them", SafeURI(uri), u.Path)
		}
	}
	return nil
}

// isAzureHost reports whether h is a Blob or DFS host of an Azure storage account or of
// OneLake (azurehost.Parse), the only hosts an https:// location may name.
func isAzureHost(h string) bool {
	_, ok := azurehost.Parse(h)
	return ok
}

// Resolve checks uri and o (complete: Open adds the environment) and returns what opens the
// store, making no request. Backends other than the local one resolve through Register.
func Resolve(uri string, o Options) (Opener, error) { return resolve(uri, o, nil) }

// resolve is Resolve with every HTTP request of an object store passed through wrap (nil: none).
func resolve(uri string, o Options, wrap func(http.RoundTripper) http.RoundTripper) (Opener, error) {
	t, err := parse(uri)
	if err != nil {
		return nil, err
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	if t.kind == "local" {
		return func(context.Context) (storage.Store, error) { return local.New(t.path) }, nil
	}
	r, ok := registered(t.kind)
	if !ok {
		return nil, fmt.Errorf("location %s: the %s backend is not linked into this program: import _ %q (or %q for every backend)",
			safe(t.u), t.kind, backendPackage[t.kind], modulePath+"/storage/location/all")
	}
	c := commonOf(o)
	lim, err := limiterOf(t.u, o)
	if err != nil {
		return nil, err
	}
	c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		rt = lim.Wrap(rt)
		if wrap != nil {
			rt = wrap(rt)
		}
		return rt
	}
	return r(Parsed{URL: t.u, Kind: t.kind, Common: c}, o)
}

// ParseObject checks an object-store location and its options as Resolve does, and returns
// the location parsed (the backends' tests resolve with it).
func ParseObject(uri string, o Options) (Parsed, error) {
	t, err := parse(uri)
	if err != nil {
		return Parsed{}, err
	}
	if err := o.validate(); err != nil {
		return Parsed{}, err
	}
	if t.kind == "local" {
		return Parsed{}, fmt.Errorf("location %s is a local path, not an object-store location", uri)
	}
	return Parsed{URL: t.u, Kind: t.kind, Common: commonOf(o)}, nil
}

// commonOf reads the options every object store takes.
func commonOf(o Options) Common {
	c := Common{Concurrency: o.Int("concurrency"), BatchSize: o.Int("delete_batch_size"), ListPageSize: o.Int("list_page_size")}
	if v, ok := o["max_retries"]; ok && v != "" {
		c.MaxAttempts = o.Int("max_retries") + 1
	}
	return c
}

// limiterOf is the process's rate limiter of the bucket or container u names, at the
// max_requests_per_second of o (none: adaptive only, it slows down when the store throttles).
func limiterOf(u *url.URL, o Options) (*ratelimit.Limiter, error) {
	var rps float64
	if v := strings.TrimSpace(o["max_requests_per_second"]); v != "" {
		rps, _ = strconv.ParseFloat(v, 64) // validate checked it
	}
	return ratelimit.Shared(Scope(u), rps)
}

// Scope names the bucket or container of an object-store location, for the rate limit its
// stores share: scheme://bucket (s3, gs), scheme://container@account (abfss, wasbs, az with
// its account), https://host/container; never a path below it, a query or a secret.
func Scope(u *url.URL) string {
	s := strings.ToLower(u.Scheme) + "://"
	if u.User != nil {
		s += u.User.Username() + "@"
	}
	s += strings.ToLower(u.Host)
	if u.Scheme == "https" || u.Scheme == "http" {
		if first, _, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/"); first != "" {
			s += "/" + first
		}
	}
	return s
}
