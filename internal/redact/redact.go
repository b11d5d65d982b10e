// Package redact keeps the secrets of a run out of what the command line prints. A Redactor
// knows the secret values of the run (storage options marked secret, the environment
// variables they read, the password and query of every URI given, values SET gives to
// sensitive keys) and replaces each of them, in the spellings encoders give it (URL and
// JSON escaping), with Mask; patterns catch what it was not told (sig=…, AccountKey=…,
// a URI's password, the value of a sensitive key=value). Writer applies it to a stream,
// line by line, so that a secret split across writes is still caught.
//
// The Redactor is the guarantee of the command line, not a licence for the rest of the code
// to print secrets: errors should not carry them in the first place.
package redact

import (
	"context"
	"encoding/json"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// Mask replaces a secret, as Spark prints a redacted value.
const Mask = "*********(redacted)"

// minSecret is the shortest value searched for: shorter ones would match ordinary text (a
// secret that short protects nothing); the patterns still apply to them.
const minSecret = 4

// minPiece is the shortest line of a multi-line secret (a key file) searched for on its own.
const minPiece = 8

// sensitiveWords are the parts of a key that make its value a secret: Spark's
// spark.redaction.regex, (?i)secret|password|token|access[.]?key, extended to the keys Hadoop
// and the clouds use for account keys, private keys and SAS. (A list of substrings rather
// than the regular expression: every key=value of every output line is checked.)
var sensitiveWords = []string{
	"secret", "password", "passwd", "pwd", "token", "signature", "credential",
	"accesskey", "access.key", "access_key", "accountkey", "account.key", "account_key",
	"privatekey", "private.key", "private_key",
}

// notSecret are keys with a sensitive word that name no secret: the cursor of a page of a
// list (Fabric's and Azure's List APIs call it continuationToken; the service's Fabric job API
// answers one, and a masked one would be no cursor).
var notSecret = map[string]bool{"continuationtoken": true}

// SensitiveKey reports whether the value of a setting, property or parameter named key is a
// secret: fs.azure.account.key.ACCOUNT.dfs.core.windows.net, fs.s3a.secret.key,
// spark.hadoop.fs.azure.sas.…, a SAS's sig.
func SensitiveKey(key string) bool {
	var buf [128]byte
	k := buf[:0]
	for i := 0; i < len(key); i++ {
		k = append(k, lower(key[i]))
	}
	lk := string(k)
	if notSecret[lk] {
		return false
	}
	if lk == "sig" || hasWord(lk, "sas") { // fs.azure.sas.…, azure_storage_sas_token, not kansas
		return true
	}
	for _, w := range sensitiveWords {
		if strings.Contains(lk, w) {
			return true
		}
	}
	return false
}

// hasWord reports whether w is in k as a word: between '.', '_', '-' or the ends, or followed
// by "token" or "key".
func hasWord(k, w string) bool {
	for off := 0; ; {
		i := strings.Index(k[off:], w)
		if i < 0 {
			return false
		}
		i += off
		end := i + len(w)
		before := i == 0 || strings.IndexByte("._-", k[i-1]) >= 0
		after := end == len(k) || strings.IndexByte("._-", k[end]) >= 0 ||
			strings.HasPrefix(k[end:], "token") || strings.HasPrefix(k[end:], "key")
		if before && after {
			return true
		}
		off = i + 1
	}
}

// Redactor replaces the secrets it was given, and those the patterns find. The zero value
// is not usable; a nil *Redactor adds nothing and returns text as is from String.
type Redactor struct {
	mu       sync.RWMutex
	secrets  map[string]bool
	replacer *strings.Replacer // nil when there is no secret; rebuilt after Add
}

// New returns a Redactor that knows no secret yet.
func New() *Redactor { return &Redactor{secrets: map[string]bool{}} }

// Add registers a secret value, and the spellings of it an encoder may print: URL-escaped
// (query and path, upper- and lower-case hex), unescaped when it is escaped, JSON-escaped
// (with and without HTML escaping, '/' as \/, '+' as \u002b). A value that is a query string
// (a SAS token) also registers its sensitive parameters (sig) on their own; a multi-line value
// (a key file) also registers its lines.
func (r *Redactor) Add(secret string) {
	if r == nil || len(secret) < minSecret {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.add(secret)
	if strings.Contains(secret, "=") {
		r.addQuery(strings.TrimPrefix(secret, "?"))
	}
	for _, piece := range pieces(secret) {
		if len(piece) >= minPiece {
			r.add(piece)
		}
	}
	r.replacer = nil
}

// AddURI registers what may be secret in a URI: its password and its query (as a whole, and
// its sensitive parameters). Other strings (a path, a table name) register nothing, except
// what follows a '?' in them. Text with blanks in it (a SQL script, a path with a space) is
// taken word by word.
func (r *Redactor) AddURI(uri string) {
	uri = strings.TrimSpace(uri)
	if r == nil || !strings.ContainsAny(uri, "@?#") {
		return
	}
	if strings.ContainsAny(uri, " \t\r\n") {
		for _, f := range strings.Fields(uri) {
			r.AddURI(strings.Trim(f, "'\"`;(),"))
		}
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	u, err := url.Parse(uri)
	if err != nil || u.Opaque != "" {
		// Unparsable: the text after '?' and a password before the host, as written.
		if _, q, ok := strings.Cut(uri, "?"); ok {
			r.add(q)
			r.addQuery(q)
		}
		if pw := rawPassword(uri); pw != "" {
			r.add(pw)
		}
		r.replacer = nil
		return
	}
	if pw, ok := u.User.Password(); ok {
		r.add(pw)
	}
	if u.RawQuery != "" {
		r.add(u.RawQuery)
		r.addQuery(u.RawQuery)
	}
	if u.Fragment != "" {
		r.add(u.EscapedFragment())
		r.add(u.Fragment)
	}
	r.replacer = nil
}

// addQuery registers the values of the sensitive parameters of a query string.
func (r *Redactor) addQuery(q string) {
	for _, part := range strings.FieldsFunc(q, func(c rune) bool { return c == '&' || c == ';' }) {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		if dk, err := url.QueryUnescape(k); err == nil {
			k = dk
		}
		if SensitiveKey(k) {
			r.add(v)
		}
	}
}

// add registers s and its encoded spellings; r.mu is held.
func (r *Redactor) add(s string) {
	if len(s) < minSecret {
		return
	}
	forms := []string{s, url.QueryEscape(s), url.PathEscape(s)}
	if d, err := url.QueryUnescape(s); err == nil && d != s {
		forms = append(forms, d, url.QueryEscape(d), url.PathEscape(d))
	}
	if d, err := url.PathUnescape(s); err == nil && d != s {
		forms = append(forms, d)
	}
	for _, f := range forms {
		for _, g := range []string{f, lowerHex(f)} {
			for _, j := range jsonForms(g) {
				for _, h := range []string{j, htmlText.Replace(j), htmlTemplateText.Replace(j)} {
					if len(h) >= minSecret {
						r.secrets[h] = true
					}
				}
			}
		}
	}
}

// htmlText and htmlTemplateText escape a secret as html.EscapeString and html/template (which
// also writes '+' as &#43;) print it in a page: the service redacts pages after rendering.
var (
	htmlText         = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
	htmlTemplateText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;", "+", "&#43;")
)

// jsonForms returns s and the spellings of s inside a JSON string.
func jsonForms(s string) []string {
	out := []string{s}
	plain, html := jsonBody(s, false), jsonBody(s, true)
	for _, j := range []string{plain, html} {
		out = append(out, j, strings.ReplaceAll(j, "/", `\/`), strings.ReplaceAll(j, "+", `\u002b`),
			strings.ReplaceAll(strings.ReplaceAll(j, "/", `\/`), "+", `\u002b`))
	}
	return out
}

// jsonBody is s as encoding/json writes it inside a string, without the quotes.
func jsonBody(s string, escapeHTML bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(s)
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// lowerHex returns s with the hex digits of its %XX escapes in lower case.
func lowerHex(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lower(b[i+1]), lower(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// pieces returns the lines of a multi-line secret, split at real and at JSON-escaped line
// breaks, trimmed.
func pieces(s string) []string {
	if !strings.ContainsAny(s, "\r\n") && !strings.Contains(s, `\n`) {
		return nil
	}
	s = strings.NewReplacer(`\r\n`, "\n", `\n`, "\n", "\r", "\n").Replace(s)
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// rawPassword returns the password of the authority of an unparsable URI.
func rawPassword(s string) string {
	_, rest, ok := strings.Cut(s, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return ""
	}
	_, pw, _ := strings.Cut(rest[:at], ":")
	return pw
}

// String returns s with every registered secret and every secret the patterns find
// replaced by Mask.
func (r *Redactor) String(s string) string {
	if r != nil {
		if rep := r.replacerFor(); rep != nil {
			s = rep.Replace(s)
		}
	}
	return redactPatterns(s)
}

func (r *Redactor) replacerFor() *strings.Replacer {
	r.mu.RLock()
	rep, n := r.replacer, len(r.secrets)
	r.mu.RUnlock()
	if rep != nil || n == 0 {
		return rep
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.replacer == nil {
		olds := make([]string, 0, len(r.secrets))
		for s := range r.secrets {
			olds = append(olds, s)
		}
		// Longest first: the replacer tries the old strings in argument order.
		sort.Slice(olds, func(i, j int) bool {
			if len(olds[i]) != len(olds[j]) {
				return len(olds[i]) > len(olds[j])
			}
			return olds[i] < olds[j]
		})
		args := make([]string, 0, 2*len(olds))
		for _, o := range olds {
			args = append(args, o, Mask)
		}
		r.replacer = strings.NewReplacer(args...)
	}
	return r.replacer
}

type ctxKey struct{}

// NewContext returns ctx carrying r.
func NewContext(ctx context.Context, r *Redactor) context.Context {
	return context.WithValue(ctx, ctxKey{}, r)
}

// FromContext returns the Redactor of ctx, or nil (which registers nothing).
func FromContext(ctx context.Context) *Redactor {
	if ctx == nil {
		return nil
	}
	r, _ := ctx.Value(ctxKey{}).(*Redactor)
	return r
}
