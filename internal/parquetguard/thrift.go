package parquetguard

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// CheckThrift walks one thrift compact-protocol struct at the start of b and returns its
// length. parquet-go's thrift decoder allocates as many elements as a list header claims
// before reading them, so a damaged length could make it allocate gigabytes and crash the
// process; every element takes at least one byte, so a list longer than the bytes left is
// refused here. Nesting is bounded too.
func CheckThrift(b []byte) (int, error) {
	n, _, err := checkThrift(b)
	return n, err
}

// checkThrift is CheckThrift that also says, when it fails, whether it failed for want of bytes
// after b: a page header read from a window of the file may be cut by the window's end, and
// must then be walked again with more bytes before it is judged.
func checkThrift(b []byte) (n int, short bool, err error) {
	w := thriftWalker{b: b}
	if err := w.structure(0); err != nil {
		return 0, w.short, err
	}
	return w.pos, false, nil
}

type thriftWalker struct {
	b     []byte
	pos   int
	short bool // a read went past the end of b
}

var errThrift = errors.New("malformed thrift")

func (w *thriftWalker) byte() (byte, error) {
	if w.pos >= len(w.b) {
		w.short = true
		return 0, io.ErrUnexpectedEOF
	}
	w.pos++
	return w.b[w.pos-1], nil
}

func (w *thriftWalker) uvarint() (uint64, error) {
	v, n := binary.Uvarint(w.b[w.pos:])
	w.short = w.short || n == 0 // n < 0 is an overflow, whatever follows
	if n <= 0 {
		return 0, errThrift
	}
	w.pos += n
	return v, nil
}

func (w *thriftWalker) skip(n uint64) error {
	if n > uint64(len(w.b)-w.pos) {
		w.short = true
		return io.ErrUnexpectedEOF
	}
	w.pos += int(n)
	return nil
}

func (w *thriftWalker) structure(depth int) error {
	if depth > 32 {
		return fmt.Errorf("%w: nested too deep", errThrift)
	}
	for {
		h, err := w.byte()
		if err != nil {
			return err
		}
		if h == 0 {
			return nil // stop field
		}
		if h>>4 == 0 { // long form: the field id follows
			if _, err := w.uvarint(); err != nil {
				return err
			}
		}
		if err := w.value(h&0x0f, depth, true); err != nil {
			return err
		}
	}
}

// value skips one value of compact type t; booleans take no byte as fields, one in lists.
func (w *thriftWalker) value(t byte, depth int, field bool) error {
	switch t {
	case 1, 2: // true, false
		if field {
			return nil
		}
		return w.skip(1)
	case 3: // byte
		return w.skip(1)
	case 4, 5, 6: // i16, i32, i64
		_, err := w.uvarint()
		return err
	case 7: // double
		return w.skip(8)
	case 8: // binary
		n, err := w.uvarint()
		if err != nil {
			return err
		}
		return w.skip(n)
	case 9, 10: // list, set
		h, err := w.byte()
		if err != nil {
			return err
		}
		n := uint64(h >> 4)
		if n == 15 {
			if n, err = w.uvarint(); err != nil {
				return err
			}
		}
		if n > uint64(len(w.b)-w.pos) {
			w.short = true
			return fmt.Errorf("%w: list of %d elements in %d bytes", errThrift, n, len(w.b)-w.pos)
		}
		for range n {
			if err := w.value(h&0x0f, depth+1, false); err != nil {
				return err
			}
		}
		return nil
	case 11: // map
		n, err := w.uvarint()
		if err != nil || n == 0 {
			return err
		}
		kv, err := w.byte()
		if err != nil {
			return err
		}
		if n > uint64(len(w.b)-w.pos)/2 {
			w.short = true
			return fmt.Errorf("%w: map of %d entries in %d bytes", errThrift, n, len(w.b)-w.pos)
		}
		for range n {
			if err := w.value(kv>>4, depth+1, false); err != nil {
				return err
			}
			if err := w.value(kv&0x0f, depth+1, false); err != nil {
				return err
			}
		}
		return nil
	case 12: // struct
		return w.structure(depth + 1)
	case 13: // uuid
		return w.skip(16)
	}
	return fmt.Errorf("%w: unknown type %d", errThrift, t)
}
