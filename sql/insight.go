package sql

import "strings"

// Inspect is INSPECT table [LITE] [RETAIN n HOURS], a deltavacuum extension: the report of
// what a VACUUM would reclaim (deltavacuum inspect).
type Inspect struct {
	Table TableRef
	Lite  bool
	// Retain is nil when there is no RETAIN clause; the caller decides what it accepts.
	Retain *Number
}

func (s *Inspect) String() string {
	str := "INSPECT " + s.Table.String()
	if s.Lite {
		str += " LITE"
	}
	if s.Retain != nil {
		str += " RETAIN " + s.Retain.Text + " HOURS"
	}
	return str
}

// ExplainVacuum is EXPLAIN VACUUM table [RETAIN n HOURS] PATHS ('path', ...), a deltavacuum
// extension: what a VACUUM does with each path, and why (deltavacuum explain).
type ExplainVacuum struct {
	Table  TableRef
	Retain *Number
	Paths  []string
}

func (s *ExplainVacuum) String() string {
	var b strings.Builder
	b.WriteString("EXPLAIN VACUUM " + s.Table.String())
	if s.Retain != nil {
		b.WriteString(" RETAIN " + s.Retain.Text + " HOURS")
	}
	b.WriteString(" PATHS (")
	for i, p := range s.Paths {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteString(p))
	}
	b.WriteString(")")
	return b.String()
}

func (*Inspect) statement()       {}
func (*ExplainVacuum) statement() {}

// retainClause parses the rest of a RETAIN n HOURS clause starting at t into *retain,
// recording a duplicate.
func (p *parser) retainClause(t token, retain **Number) error {
	n, err := p.number()
	if err != nil {
		return err
	}
	if !p.accept("HOURS") && !p.accept("HOUR") {
		return p.unexpected("HOURS")
	}
	if *retain != nil {
		p.semantic(&DuplicateClauseError{Position: position(p.src, t.pos), Clause: "RETAIN"})
	}
	*retain = &n
	return nil
}

// inspect parses INSPECT table [LITE] [RETAIN n HOURS], clauses in any order.
func (p *parser) inspect() (Statement, error) {
	p.next()
	table, err := p.tableRef(vacuumFormats)
	if err != nil {
		return nil, err
	}
	s := &Inspect{Table: table}
	for !p.atEnd() {
		t := p.next()
		switch {
		case isKeyword(t, "LITE"):
			if s.Lite {
				p.semantic(&DuplicateClauseError{Position: position(p.src, t.pos), Clause: "LITE"})
			}
			s.Lite = true
		case isKeyword(t, "RETAIN"):
			if err := p.retainClause(t, &s.Retain); err != nil {
				return nil, err
			}
		default:
			p.i--
			return nil, p.unexpected("LITE", "RETAIN", "end of statement")
		}
	}
	return s, nil
}

// explain parses EXPLAIN VACUUM table [RETAIN n HOURS] PATHS ('path', ...), clauses in any
// order, PATHS required.
func (p *parser) explain() (Statement, error) {
	p.next()
	if err := p.expect("VACUUM"); err != nil {
		return nil, err
	}
	table, err := p.tableRef(vacuumFormats)
	if err != nil {
		return nil, err
	}
	s := &ExplainVacuum{Table: table}
	for !p.atEnd() {
		t := p.next()
		switch {
		case isKeyword(t, "RETAIN"):
			if err := p.retainClause(t, &s.Retain); err != nil {
				return nil, err
			}
		case isKeyword(t, "PATHS"):
			paths, err := p.stringList()
			if err != nil {
				return nil, err
			}
			if s.Paths != nil {
				p.semantic(&DuplicateClauseError{Position: position(p.src, t.pos), Clause: "PATHS"})
			}
			s.Paths = paths
		default:
			p.i--
			return nil, p.unexpected("RETAIN", "PATHS", "end of statement")
		}
	}
	if s.Paths == nil {
		return nil, p.unexpected("PATHS")
	}
	return s, nil
}

// stringList parses ('a', 'b', ...): one string literal at least.
func (p *parser) stringList() ([]string, error) {
	if !p.acceptPunct("(") {
		return nil, p.unexpected("'('")
	}
	out := []string{}
	for {
		t := p.peek()
		if t.kind != tokString {
			return nil, p.unexpected("a path in quotes")
		}
		p.next()
		out = append(out, t.val)
		if p.acceptPunct(")") {
			return out, nil
		}
		if !p.acceptPunct(",") {
			return nil, p.unexpected("','", "')'")
		}
	}
}
