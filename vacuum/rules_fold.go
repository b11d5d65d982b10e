package vacuum

import (
	"strings"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// fold returns the form in which two keys that one file system may take for one file are
// equal: Unicode case folding of the NFC form. Case-insensitive file systems (macOS and
// Windows by default, ext4 and f2fs casefold folders, SMB shares) open Part-0.parquet for
// part-0.parquet, and normalization-insensitive ones (APFS, HFS+) treat é in NFC and NFD as
// one name: a listing can then spell a live file differently from the log. A candidate whose
// folded key is that of a protected key is kept. On a file system that tells such names
// apart, this keeps a file that only looks like a live one: it errs on the side of keeping.
func fold(key string) string {
	upper := false
	for i := 0; i < len(key); i++ {
		switch c := key[i]; {
		case c >= 0x80:
			return cases.Fold().String(norm.NFC.String(key))
		case 'A' <= c && c <= 'Z':
			upper = true
		}
	}
	if !upper {
		return key // the common key: lower-case ASCII, folded already
	}
	return strings.ToLower(key)
}

// foldedKeys remembers the folded forms of the protected keys that differ from their key
// (most keys are lower-case ASCII and need nothing here), so that a candidate can be checked
// against every protected key in either spelling.
type foldedKeys struct{ hashList }

// protect adds the folded form of a protected key, when it differs from it.
func (p *Planner) protectFolded(key string) {
	if f := fold(key); f != key {
		p.keepFolded.add(p.hash(f))
	}
}

// keptByFold reports whether candidate key, not protected as it is spelled, is a protected key
// in another spelling of one file (see fold).
func (p *Planner) keptByFold(key string) bool {
	f := fold(key)
	h := p.hash(f)
	return p.keepFolded.has(h) || (f != key && p.keep.has(h))
}
