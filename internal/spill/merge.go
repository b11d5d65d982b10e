package spill

import "slices"

// Order is how records are sorted and folded. Compare orders them; Same, when set, says that
// two records, the first ordered before the second, are of one key: of such records only the
// last in the order of Compare is kept. So Compare must order the records of one key from the
// ones to drop to the one to keep, and records it finds equal must be interchangeable.
type Order[T any] struct {
	Compare func(a, b T) int
	Same    func(a, b T) bool
}

// Sort sorts rs in memory by o and folds the records of one key. It returns the records kept,
// a prefix of rs; the rest of rs is cleared.
func Sort[T any](rs []T, o Order[T]) []T {
	slices.SortFunc(rs, o.Compare)
	if o.Same == nil {
		return rs
	}
	out := rs[:0]
	for i := range rs {
		if i+1 < len(rs) && o.Same(rs[i], rs[i+1]) {
			continue // the next one is kept instead
		}
		out = append(out, rs[i])
	}
	clear(rs[len(out):])
	return out
}

// Merge reads the runs of a File and records held in memory as one sequence in the order of
// an Order, the records of one key folded into one. Each run holds one block of each at a time.
type Merge[T any] struct {
	o     Order[T]
	heads []*source[T] // a heap by the order of each one's current record
	init  bool
	err   error
	out   T
}

// source is a run of the file, or the records in memory.
type source[T any] struct {
	cur *T
	c   *cursor[T] // nil: mem
	mem []T
}

func (s *source[T]) next() (bool, error) {
	if s.c == nil {
		if len(s.mem) == 0 {
			return false, nil
		}
		s.cur, s.mem = &s.mem[0], s.mem[1:]
		return true, nil
	}
	ok, err := s.c.next()
	s.cur = &s.c.rec
	return ok, err
}

// Merge merges the File's runs, each of which must have been sorted and folded by o (Sort)
// before it was appended, with mem, sorted and folded likewise, which it only reads.
func (f *File[T]) Merge(mem []T, o Order[T]) *Merge[T] {
	m := &Merge[T]{o: o, heads: make([]*source[T], 0, 1+len(f.runs))}
	m.heads = append(m.heads, &source[T]{mem: mem})
	for i, first := range f.runs {
		end := len(f.blocks)
		if i+1 < len(f.runs) {
			end = f.runs[i+1]
		}
		m.heads = append(m.heads, &source[T]{c: f.cursor(first, end, mergeAhead)})
	}
	return m
}

// Next returns the next record, nil after the last. The record is valid until the next call.
// After an error (the file's, phrased by the File's fault function) every call returns it.
func (m *Merge[T]) Next() (*T, error) {
	if m.err != nil {
		return nil, m.err
	}
	if !m.init {
		m.init = true
		hs := m.heads[:0]
		for _, s := range m.heads {
			ok, err := s.next()
			if err != nil {
				m.err = err
				return nil, err
			}
			if ok {
				hs = append(hs, s)
			}
		}
		clear(m.heads[len(hs):])
		m.heads = hs
		for i := len(hs)/2 - 1; i >= 0; i-- {
			m.down(i)
		}
	}
	if len(m.heads) == 0 {
		return nil, nil
	}
	m.out = *m.heads[0].cur
	if m.err = m.advance(); m.err != nil {
		return nil, m.err
	}
	for m.o.Same != nil && len(m.heads) > 0 && m.o.Same(m.out, *m.heads[0].cur) {
		m.out = *m.heads[0].cur
		if m.err = m.advance(); m.err != nil {
			return nil, m.err
		}
	}
	return &m.out, nil
}

// advance moves the first source on and restores the heap.
func (m *Merge[T]) advance() error {
	ok, err := m.heads[0].next()
	if err != nil {
		return err
	}
	if !ok {
		last := len(m.heads) - 1
		m.heads[0], m.heads[last] = m.heads[last], nil
		m.heads = m.heads[:last]
	}
	if len(m.heads) > 1 {
		m.down(0)
	}
	return nil
}

func (m *Merge[T]) down(i int) {
	h := m.heads
	for {
		j := 2*i + 1
		if j >= len(h) {
			return
		}
		if r := j + 1; r < len(h) && m.o.Compare(*h[r].cur, *h[j].cur) < 0 {
			j = r
		}
		if m.o.Compare(*h[j].cur, *h[i].cur) >= 0 {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}
