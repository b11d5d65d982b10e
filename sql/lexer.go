package sql

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokenKind uint8

const (
	tokEOF    tokenKind = iota // end of input; text is empty
	tokSemi                    // ;
	tokWord                    // plain identifier or keyword
	tokIdent                   // backquoted identifier; val holds the name
	tokString                  // string literal; val holds the unescaped value
	tokNumber                  // unsigned numeric literal: 12, 1.5, .5, 5., 1e3, 2.5E-3
	tokPunct                   // operator, parenthesis or any other character
)

// A token is a lexical element of the input. pos and end are byte offsets into the
// whole input, so that text == input[pos:end].
type token struct {
	kind     tokenKind
	text     string
	val      string
	pos, end int
}

const endOfInput = "end of input"

// display is the token as an error message shows it.
func (t token) display() string {
	if t.kind == tokEOF {
		return endOfInput
	}
	s := strings.ToValidUTF8(t.text, "\uFFFD")
	const max = 40
	if utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max]) + "..."
	}
	return s
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isIdentChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || isDigit(c) || c == '_'
}

func isHex(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// twoCharOps are the operators of two characters; every other punctuation token is a
// single character.
var twoCharOps = []string{"==", "!=", "<>", "<=", ">="}

// lex splits src into tokens, dropping white space and comments. The result does not
// include a tokEOF token. Unterminated literals and comments are syntax errors at
// their start.
func lex(src string) ([]token, error) {
	var toks []token
	n := len(src)
	for i := 0; i < n; {
		c := src[i]
		start := i
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(src[i:])
			i += size
			if r == utf8.RuneError || !unicode.IsSpace(r) && r != '\uFEFF' {
				toks = append(toks, token{kind: tokPunct, text: src[start:i], pos: start, end: i})
			}
		case c == '-' && i+1 < n && src[i+1] == '-':
			// A line comment ends at LF or CR, as in Spark's and Delta's grammars
			// (SIMPLE_COMMENT: '--' ~[\r\n]*): a script with CR line ends must not have its
			// next line (RETAIN, DRY RUN) read as part of the comment.
			for i < n && src[i] != '\n' && src[i] != '\r' {
				i++
			}
		case c == '/' && i+1 < n && src[i+1] == '*':
			end, err := skipBlockComment(src, i)
			if err != "" {
				return nil, lexError(src, start, err)
			}
			i = end
		case c == '\'' || c == '"':
			val, end, ok := scanString(src, i)
			if !ok {
				return nil, lexError(src, start, "unterminated string literal")
			}
			toks = append(toks, token{kind: tokString, text: src[start:end], val: val, pos: start, end: end})
			i = end
		case (c == 'r' || c == 'R') && i+1 < n && (src[i+1] == '\'' || src[i+1] == '"'):
			// A raw string literal: no escapes.
			q := src[i+1]
			j := strings.IndexByte(src[i+2:], q)
			if j < 0 {
				return nil, lexError(src, start, "unterminated string literal")
			}
			end := i + 2 + j + 1
			toks = append(toks, token{kind: tokString, text: src[start:end], val: src[i+2 : end-1], pos: start, end: end})
			i = end
		case c == '`':
			val, end, ok := scanBackquoted(src, i)
			if !ok {
				return nil, lexError(src, start, "unterminated quoted identifier")
			}
			toks = append(toks, token{kind: tokIdent, text: src[start:end], val: val, pos: start, end: end})
			i = end
		case isDigit(c) || c == '.' && i+1 < n && isDigit(src[i+1]) && !(i > 0 && (isIdentChar(src[i-1]) || src[i-1] == '`')):
			kind, end := scanNumber(src, i)
			toks = append(toks, token{kind: kind, text: src[start:end], pos: start, end: end})
			i = end
		case isIdentChar(c):
			for i < n && isIdentChar(src[i]) {
				i++
			}
			toks = append(toks, token{kind: tokWord, text: src[start:i], pos: start, end: i})
		case c == ';':
			i++
			toks = append(toks, token{kind: tokSemi, text: ";", pos: start, end: i})
		default:
			i++
			for _, op := range twoCharOps {
				if strings.HasPrefix(src[start:], op) {
					i = start + len(op)
					break
				}
			}
			toks = append(toks, token{kind: tokPunct, text: src[start:i], pos: start, end: i})
		}
	}
	return toks, nil
}

func lexError(src string, off int, msg string) *SyntaxError {
	return &SyntaxError{Position: position(src, off), Msg: msg}
}

// skipBlockComment returns the offset after the /* ... */ comment starting at i, or why it
// cannot be read. A "/*" inside a comment is refused: Spark's grammar nests block comments and
// Delta's (which parses VACUUM) does not, so "/* /* */ DRY RUN */" is one comment to one and a
// DRY RUN to the other; a statement read two ways is not run.
func skipBlockComment(src string, i int) (end int, err string) {
	for i += 2; i+1 < len(src); {
		switch src[i : i+2] {
		case "/*":
			return 0, "a comment inside a comment: Spark and Delta read nested comments differently; remove the inner /*"
		case "*/":
			return i + 2, ""
		default:
			i++
		}
	}
	return 0, "unterminated comment"
}

// scanNumber scans the numeric literal starting at i, which is a digit or a '.' followed
// by a digit. A run of identifier characters that starts with digits but is not a
// number, such as 1a or 2024_sales, is a word. A decimal point directly followed by an
// identifier character is not part of the number: 123.abc is 123, '.', abc.
func scanNumber(src string, i int) (tokenKind, int) {
	n := len(src)
	j := i
	for j < n && isDigit(src[j]) {
		j++
	}
	intEnd := j
	dot := false
	if j < n && src[j] == '.' {
		dot = true
		j++
		for j < n && isDigit(src[j]) {
			j++
		}
	}
	if j < n && (src[j] == 'e' || src[j] == 'E') {
		k := j + 1
		if k < n && (src[k] == '+' || src[k] == '-') {
			k++
		}
		if k < n && isDigit(src[k]) {
			for k < n && isDigit(src[k]) {
				k++
			}
			j = k
		}
	}
	if j < n && isIdentChar(src[j]) {
		switch {
		case !dot:
			for j < n && isIdentChar(src[j]) {
				j++
			}
			return tokWord, j
		case intEnd > i:
			return tokNumber, intEnd
		default: // .5x: the dot on its own
			return tokPunct, i + 1
		}
	}
	return tokNumber, j
}

// scanString scans the string literal whose opening quote is at i and returns its
// unescaped value and the offset after the closing quote.
func scanString(src string, i int) (val string, end int, ok bool) {
	q := src[i]
	var b strings.Builder
	n := len(src)
	j := i + 1
	for j < n {
		c := src[j]
		switch {
		case c == q:
			if j+1 < n && src[j+1] == q { // a doubled quote stands for one
				b.WriteByte(q)
				j += 2
				continue
			}
			return b.String(), j + 1, true
		case c == '\\':
			if j+1 >= n {
				return "", 0, false
			}
			j = unescape(&b, src, j)
		default:
			b.WriteByte(c)
			j++
		}
	}
	return "", 0, false
}

// unescape writes the value of the escape sequence at src[j] == '\\' to b and returns the
// offset after it. The rules are Spark's (unescapeSQLString): \uXXXX, \UXXXXXXXX, octal
// \[01][0-7][0-7], the usual single-character escapes, \% and \_ kept with their
// backslash for LIKE, and any other character standing for itself.
func unescape(b *strings.Builder, src string, j int) int {
	n := len(src)
	next := src[j+1]
	switch {
	case next == 'u' && j+6 <= n && allHex(src[j+2:j+6]):
		b.WriteRune(rune(parseHex(src[j+2 : j+6])))
		return j + 6
	case next == 'U' && j+10 <= n && allHex(src[j+2:j+10]):
		b.WriteRune(rune(parseHex(src[j+2 : j+10])))
		return j + 10
	case (next == '0' || next == '1') && j+4 <= n && isOctal(src[j+2]) && isOctal(src[j+3]):
		b.WriteByte((next-'0')<<6 | (src[j+2]-'0')<<3 | (src[j+3] - '0'))
		return j + 4
	}
	switch next {
	case '0':
		b.WriteByte(0)
	case 'b':
		b.WriteByte('\b')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'Z':
		b.WriteByte(0x1A)
	case '%', '_':
		b.WriteByte('\\')
		b.WriteByte(next)
	default:
		_, size := utf8.DecodeRuneInString(src[j+1:])
		b.WriteString(src[j+1 : j+1+size])
		return j + 1 + size
	}
	return j + 2
}

func isOctal(c byte) bool { return '0' <= c && c <= '7' }

func allHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

func parseHex(s string) uint64 {
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isDigit(c):
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		v = v<<4 | uint64(c)
	}
	return v
}

// scanBackquoted scans the backquoted identifier starting at i.
func scanBackquoted(src string, i int) (val string, end int, ok bool) {
	var b strings.Builder
	for j := i + 1; j < len(src); j++ {
		if src[j] != '`' {
			b.WriteByte(src[j])
			continue
		}
		if j+1 < len(src) && src[j+1] == '`' {
			b.WriteByte('`')
			j++
			continue
		}
		return b.String(), j + 1, true
	}
	return "", 0, false
}

// quoteString returns s as a single-quoted string literal that lexes back to s.
func quoteString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// quoteIdent returns s in backquotes.
func quoteIdent(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

// isIdentText reports whether s can be written as a name without backquotes: a run of
// ASCII letters, digits and underscores that is not all digits.
func isIdentText(s string) bool {
	if s == "" {
		return false
	}
	digits := true
	for i := 0; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
		if !isDigit(s[i]) {
			digits = false
		}
	}
	return !digits
}

// isWordText reports whether s lexes as a single word (so not as a number like 1e5).
func isWordText(s string) bool {
	if !isIdentText(s) {
		return false
	}
	toks, err := lex(s)
	return err == nil && len(toks) == 1 && toks[0].kind == tokWord
}

// nameString returns one part of a table name, backquoted when needed.
func nameString(s string) string {
	if isIdentText(s) {
		return s
	}
	return quoteIdent(s)
}
