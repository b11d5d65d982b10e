package redact

import "strings"

// redactPatterns masks the secrets that have a recognisable shape, whether or not they were
// registered: the password of a URI (scheme://user:PASSWORD@host), the value of a
// sensitive key in key=value, key = 'value' and key: "value" (JSON) form and in a
// key<TAB>value line (SET and SHOW TBLPROPERTIES output), and JSON Web Tokens (Microsoft
// Entra access tokens). Hand-written scanners rather than regular expressions: every line of
// a million-file DRY RUN passes here.
func redactPatterns(s string) string {
	if strings.Contains(s, "://") {
		s = maskPasswords(s)
	}
	if strings.IndexByte(s, '=') >= 0 {
		s = maskKeyValues(s)
	}
	if strings.Contains(s, `":`) {
		s = maskJSONValues(s)
	}
	if strings.IndexByte(s, '\t') >= 0 {
		s = maskTabValues(s)
	}
	if strings.Contains(s, "eyJ") {
		s = maskJWTs(s)
	}
	return s
}

// span is a part of a string to replace with Mask.
type span struct{ start, end int }

// apply replaces the spans (in order, not overlapping) of s with Mask.
func apply(s string, spans []span) string {
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString(Mask)
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String()
}

func isKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

// endOfAuthority reports whether c ends the authority of a URI in running text.
func endOfAuthority(c byte) bool {
	switch c {
	case '/', '?', '#', ' ', '\t', '\r', '\n', '"', '\'', '<', '>', '\\', '`':
		return true
	}
	return false
}

// maskPasswords masks the password of every scheme://user:password@host.
func maskPasswords(s string) string {
	var spans []span
	for off := 0; ; {
		i := strings.Index(s[off:], "://")
		if i < 0 {
			break
		}
		start := off + i + 3
		end := start
		for end < len(s) && !endOfAuthority(s[end]) {
			end++
		}
		off = end
		auth := s[start:end]
		at := strings.LastIndexByte(auth, '@')
		if at < 0 {
			continue
		}
		colon := strings.IndexByte(auth[:at], ':')
		if colon < 0 || auth[colon+1:at] == "" || auth[colon+1:at] == Mask {
			continue
		}
		spans = append(spans, span{start + colon + 1, start + at})
	}
	return apply(s, spans)
}

// valueEnd returns the end of an unquoted value starting at i.
func valueEnd(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\r', '\n', '&', ';', ',', '\'', '"', '<', '>', '(', ')', '[', ']', '{', '}', '\\', '`', '/':
			return i
		}
		i++
	}
	return i
}

// quotedEnd returns the end (past the closing quote) and the content of a quoted value
// starting at i with quote q ('\”, '"', or `\"` inside a JSON string).
func quotedEnd(s string, i int, q string) (contentStart, contentEnd, end int) {
	contentStart = i + len(q)
	j := strings.Index(s[contentStart:], q)
	if j < 0 {
		return contentStart, len(s), len(s)
	}
	return contentStart, contentStart + j, contentStart + j + len(q)
}

// maskKeyValues masks the value of every key=value, key = 'value' and key = "value" whose key
// is sensitive.
func maskKeyValues(s string) string {
	var spans []span
	last := 0 // spans must not overlap
	for off := 0; ; {
		i := strings.IndexByte(s[off:], '=')
		if i < 0 {
			break
		}
		eq := off + i
		off = eq + 1
		k := eq
		for k > 0 && s[k-1] == ' ' {
			k--
		}
		ke := k
		for k > 0 && isKeyChar(s[k-1]) {
			k--
		}
		if k == ke || k < last || (k > 0 && s[k-1] == '/') || !SensitiveKey(s[k:ke]) {
			continue // no key, or a path segment (a partition directory named token=…)
		}
		v := eq + 1
		for v < len(s) && s[v] == ' ' {
			v++
		}
		var sp span
		switch {
		case strings.HasPrefix(s[v:], Mask):
			continue
		case strings.HasPrefix(s[v:], `\"`):
			cs, ce, _ := quotedEnd(s, v, `\"`)
			sp = span{cs, ce}
		case v < len(s) && (s[v] == '\'' || s[v] == '"'):
			cs, ce, _ := quotedEnd(s, v, s[v:v+1])
			sp = span{cs, ce}
		default:
			sp = span{v, valueEnd(s, v)}
			if sp.end < len(s) && s[sp.end] == '/' {
				continue // a path segment (a partition directory named token=…), not a setting
			}
		}
		if sp.end <= sp.start {
			continue
		}
		spans = append(spans, sp)
		last, off = sp.end, sp.end
	}
	return apply(s, spans)
}

// jsonStringEnd returns the index of the closing quote of the JSON string whose content
// starts at i.
func jsonStringEnd(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case '\\':
			i += 2
			continue
		case '"':
			return i
		}
		i++
	}
	return len(s)
}

// maskJSONValues masks the string value of every "key": "value" member whose key is
// sensitive.
func maskJSONValues(s string) string {
	var spans []span
	last := 0
	for off := 0; ; {
		i := strings.Index(s[off:], `":`)
		if i < 0 {
			break
		}
		q := off + i // the closing quote of the key
		off = q + 2
		open := strings.LastIndexByte(s[last:q], '"')
		if open < 0 {
			continue
		}
		open += last
		if !SensitiveKey(s[open+1 : q]) {
			continue
		}
		v := q + 2
		for v < len(s) && (s[v] == ' ' || s[v] == '\t') {
			v++
		}
		var sp span
		switch {
		case strings.HasPrefix(s[v:], `\"`):
			// JSON inside a JSON string ({"properties":"{\"k\":\"v\"}"} in DESCRIBE HISTORY).
			cs, ce, _ := quotedEnd(s, v, `\"`)
			sp = span{cs, ce}
		case v < len(s) && s[v] == '"':
			sp = span{v + 1, jsonStringEnd(s, v+1)}
		default:
			continue
		}
		if sp.end <= sp.start || strings.HasPrefix(s[sp.start:], Mask) {
			continue
		}
		spans = append(spans, sp)
		last, off = sp.end, sp.end
	}
	return apply(s, spans)
}

// maskTabValues masks the second field of every line key<TAB>value whose key is sensitive.
func maskTabValues(s string) string {
	var spans []span
	for start := 0; start < len(s); {
		end := strings.IndexAny(s[start:], "\r\n")
		if end < 0 {
			end = len(s)
		} else {
			end += start
		}
		line := s[start:end]
		if tab := strings.IndexByte(line, '\t'); tab > 0 && plainKey(line[:tab]) && SensitiveKey(line[:tab]) {
			v := start + tab + 1
			ve := strings.IndexByte(s[v:end], '\t')
			if ve < 0 {
				ve = end
			} else {
				ve += v
			}
			if ve > v && s[v:ve] != Mask {
				spans = append(spans, span{v, ve})
			}
		}
		start = end + 1
	}
	return apply(s, spans)
}

func plainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		if !isKeyChar(k[i]) {
			return false
		}
	}
	return true
}

func isBase64URL(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// maskJWTs masks every JSON Web Token: eyJ… header, payload and signature.
func maskJWTs(s string) string {
	var spans []span
	for off := 0; ; {
		i := strings.Index(s[off:], "eyJ")
		if i < 0 {
			break
		}
		start := off + i
		j, dots := start, 0
		for j < len(s) && (isBase64URL(s[j]) || s[j] == '.') {
			if s[j] == '.' {
				dots++
			}
			j++
		}
		off = j
		if dots >= 2 && j-start >= 20 && (start == 0 || !isBase64URL(s[start-1])) {
			spans = append(spans, span{start, j})
		}
		if off == start {
			off++
		}
	}
	return apply(s, spans)
}
