package blobstore

import (
	"context"
	"strings"
	"unicode/utf8"
)

// Order is a set of orders a listing without a delimiter may come in, a bit each.
type Order uint8

const (
	// OrderBytes is the lexicographic order of the names' UTF-8 bytes (S3, GCS).
	OrderBytes Order = 1 << iota
	// OrderUTF16 is the lexicographic order of the names' UTF-16 code units (Azurite; it
	// differs from OrderBytes only between U+E000–U+FFFF and characters above U+FFFF).
	OrderUTF16
	// OrderTree is depth first, a directory's contents right after it, the names of one
	// directory in byte order: the walk's own order (an Azure hierarchical namespace).
	OrderTree
	// OrderTreeUTF16 is OrderTree with the names of one directory by UTF-16 code units.
	OrderTreeUTF16
)

// lexical are the orders in which the names below a prefix come together, one range of
// names after another: a listing can start at a name and ranges can be listed apart.
const lexical = OrderBytes | OrderUTF16

// utf16ish are the orders whose comparison of two names differs from the bytes' for
// characters above U+FFFF.
const utf16ish = OrderUTF16 | OrderTreeUTF16

// FlatListing says how a backend's listings without a delimiter come.
type FlatListing struct {
	// Orders are the orders a listing may come in (any one of them); 0 when the walk must
	// list directory by directory.
	Orders Order
	// From is set when the service starts a listing at ListOptions.From.
	From bool
	// To is set when the service ends a listing before ListOptions.To.
	To bool
	// PageSize is the number of names of a full page.
	PageSize int
}

// FlatLister is implemented by backends whose walks may list a whole tree without a
// delimiter, many directories a page.
type FlatLister interface {
	// FlatListing says how the listings come. With ask, it may send a request to learn more
	// (Azure: whether the account has a hierarchical namespace); without, it sends none.
	FlatListing(ctx context.Context, ask bool) FlatListing
}

// utf16Key maps a code point to its rank in UTF-16 order: U+E000–U+FFFF sort after the
// characters above U+FFFF, which UTF-16 writes with surrogates (U+D800–U+DFFF).
func utf16Key(r rune) rune {
	if r >= 0xE000 && r <= 0xFFFF {
		return r + 0x200000
	}
	return r
}

// compareUTF16 compares a and b by UTF-16 code units.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra == utf8.RuneError && na == 1 || rb == utf8.RuneError && nb == 1 {
			return strings.Compare(a, b) // not UTF-8: by bytes
		}
		if ra != rb {
			if utf16Key(ra) < utf16Key(rb) {
				return -1
			}
			return 1
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

// compareTree compares a and b in walk order: '/' before every other character, the rest
// by bytes (or, with utf16, by UTF-16 code units).
func compareTree(a, b string, utf16 bool) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	switch {
	case i == len(a) && i == len(b):
		return 0
	case i == len(a):
		return -1
	case i == len(b):
		return 1
	case a[i] == '/':
		return -1
	case b[i] == '/':
		return 1
	case utf16:
		// Back to the start of the rune that differs.
		for i > 0 && !utf8.RuneStart(a[i]) {
			i--
		}
		return compareUTF16(a[i:], b[i:])
	case a[i] < b[i]:
		return -1
	}
	return 1
}

// compareIn compares a and b in the single order o.
func compareIn(o Order, a, b string) int {
	switch o {
	case OrderUTF16:
		return compareUTF16(a, b)
	case OrderTree:
		return compareTree(a, b, false)
	case OrderTreeUTF16:
		return compareTree(a, b, true)
	}
	return strings.Compare(a, b)
}

// walkLess is the order of a walk: keys (directories ending in '/') with '/' before every
// other byte, so that a directory's contents come right after it and before the names it is
// a prefix of, and a file before a directory of its name.
func walkLess(a, b string) bool { return compareTree(a, b, false) < 0 }

// before reports whether a comes before b in every order of os.
func before(os Order, a, b string) bool {
	for o := Order(1); o != 0 && o <= os; o <<= 1 {
		if os&o != 0 && compareIn(o, a, b) >= 0 {
			return false
		}
	}
	return true
}

// ascending narrows os to the orders in which a comes before b.
func ascending(os Order, a, b string) Order {
	for o := Order(1); o != 0 && o <= os; o <<= 1 {
		if os&o != 0 && compareIn(o, a, b) >= 0 {
			os &^= o
		}
	}
	return os
}

// Before returns a name just before s, for a service whose listing starts after a name
// (S3's StartAfter): nothing but names that begin with the result (when any) lies between
// it and s, so the caller drops what little comes back before s.
func Before(s string) string {
	if s == "" {
		return ""
	}
	r, n := utf8.DecodeLastRuneInString(s)
	head := s[:len(s)-n]
	switch {
	case r == utf8.RuneError && n == 1, r == 0:
		return head
	case r == 0xE000:
		r = 0xD7FF // below the surrogates
	default:
		r--
	}
	return head + string(r) + "\U0010FFFF"
}

// asciiName reports whether s is ASCII only: the orders of lexical agree on it as a
// boundary between ranges.
func asciiName(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
