package deltalog

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/deltavacuum/deltavacuum/internal/parquetguard"
)

// pqPlan is the projection of one file: the column groups to read and a cursor per
// leaf column.
type pqPlan struct {
	want        Kinds
	add, remove *pqFileReader
	generic     []*pqGroupReader
	cursors     []*pqCursor
	chunks      []parquetguard.Chunk // the column chunks of the cursors, to load per row group
	numLeaves   int

	// missing names the add or remove column that a file read for its file actions lacks.
	// Its rows are then accounted for (presence, unaccounted) and pqMissingColumnsRule
	// decides, once the file is read, whether it is corrupt.
	missing  []string
	presence []*pqPresence // the other action columns, read only to tell whether a row holds one
	facts    pqMissingFacts
}

// newPQPlan plans the columns of f to read for the kinds in want. Every column read is
// checked, by exact name and type, before any row is: parquet-go's Column matches names
// exactly, as the protocol does (Add is not add), and a column of the wrong type or a
// duplicate name is ErrCorrupt.
//
// A file read for add or remove actions that lacks either column is not read as holding none:
// a missing column must never turn into "no live files" (a missing remove column would lose
// the tombstones inside the retention, which protect files). Its every row is accounted for
// instead, from the action columns it has, and pqMissingColumnsRule decides once the file is
// read: see there for the rule (a V2 checkpoint that lists sidecars, or a file none of whose
// rows could have held the missing action).
func newPQPlan(f *parquet.File, want Kinds) (*pqPlan, error) {
	p := &pqPlan{want: want, numLeaves: len(f.Schema().Columns())}
	root := f.Root()
	if err := pqCheckNames(root, "the schema"); err != nil {
		return nil, err
	}
	for _, g := range []struct {
		name string
		kind Kinds
	}{{"add", KindAdd}, {"remove", KindRemove}} {
		if want&g.kind == 0 {
			continue
		}
		col, err := pqChild(root, g.name, "the schema")
		if err != nil {
			return nil, err
		}
		if col == nil {
			p.missing = append(p.missing, g.name)
			continue
		}
		r, err := p.fileReader(col, g.kind)
		if err != nil {
			return nil, err
		}
		if g.kind == KindAdd {
			p.add = r
		} else {
			p.remove = r
		}
	}
	for _, g := range []struct {
		name string
		kind Kinds
	}{
		{"metaData", KindMetadata},
		{"protocol", KindProtocol},
		{"sidecar", KindSidecar},
		{"checkpointMetadata", KindCheckpointMetadata},
	} {
		if want&g.kind == 0 && (len(p.missing) == 0 || g.kind&(KindSidecar|KindCheckpointMetadata) == 0) {
			continue
		}
		col, err := pqChild(root, g.name, "the schema")
		if err != nil {
			return nil, err
		}
		if col == nil {
			continue
		}
		r, err := p.genericReader(col, g.kind)
		if err != nil {
			return nil, err
		}
		p.generic = append(p.generic, r)
	}
	if len(p.missing) > 0 {
		p.facts = pqMissingFacts{missing: p.missing, filesHere: want&kindFilesHere != 0}
		if err := p.planPresence(root); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// planPresence plans, for a file that lacks the add or remove column, one leaf of every other
// protocol action column that is not read already, so that each row can be told to hold an
// action or none.
func (p *pqPlan) planPresence(root *parquet.Column) error {
	read := map[string]bool{}
	for _, r := range p.generic {
		read[r.root.name] = true
	}
	for _, col := range root.Columns() {
		name := col.Name()
		if !protocolActions[name] || name == "add" || name == "remove" || read[name] {
			continue
		}
		if err := pqActionGroup(col); err != nil {
			return err
		}
		r, err := p.presenceReader(col)
		if err != nil {
			return err
		}
		p.presence = append(p.presence, r)
		p.facts.present = append(p.facts.present, name)
	}
	for _, r := range p.generic {
		p.facts.present = append(p.facts.present, r.root.name)
	}
	if p.add != nil {
		p.facts.present = append(p.facts.present, "add")
	}
	if p.remove != nil {
		p.facts.present = append(p.facts.present, "remove")
	}
	return nil
}

// pqPresence tells whether the rows of a file hold the action of a column group that the read
// does not otherwise need (txn, domainMetadata, ...), from the definition levels of one leaf:
// at or above the group's level, the group is there.
type pqPresence struct {
	leaf *pqCursor
	def  byte // the definition level of the group
}

// presenceReader plans the first leaf of group g, one that is not repeated when there is one.
func (p *pqPlan) presenceReader(g *parquet.Column) (*pqPresence, error) {
	var first, flat *parquet.Column
	var firstPath, flatPath string
	var walk func(c *parquet.Column, path string)
	walk = func(c *parquet.Column, path string) {
		if c.Leaf() {
			if first == nil {
				first, firstPath = c, path
			}
			if flat == nil && c.MaxRepetitionLevel() == 0 {
				flat, flatPath = c, path
			}
			return
		}
		for _, child := range c.Columns() {
			walk(child, path+"."+child.Name())
		}
	}
	walk(g, g.Name())
	if flat != nil {
		first, firstPath = flat, flatPath
	}
	if first == nil {
		return nil, pqCorruptf("column group %s is empty", g.Name())
	}
	kind, err := pqLeafKind(first, firstPath)
	if err != nil {
		return nil, err
	}
	c := newPQCursor(first, firstPath, kind)
	p.addCursor(c)
	return &pqPresence{leaf: c, def: byte(g.MaxDefinitionLevel())}, nil
}

// readRow advances the leaf by one row and reports whether the row holds the group.
func (r *pqPresence) readRow() (bool, error) {
	c := r.leaf
	def, err := c.next()
	if err != nil {
		return false, err
	}
	if c.rep != 0 {
		return false, pqCorruptf("column %s: row starts with repetition level %d", c.name, c.rep)
	}
	for c.maxRep > 0 { // the rest of the row's entries
		rep, ok, err := c.peekRep()
		if err != nil {
			return false, err
		}
		if !ok || rep == 0 {
			break
		}
		if _, err := c.next(); err != nil {
			return false, err
		}
	}
	return def >= r.def, nil
}

// pqMissingFacts is what a file read for its add and remove actions, lacking the column of one
// of them, showed once read.
type pqMissingFacts struct {
	missing   []string // the columns it lacks: add, remove or both
	present   []string // the protocol action columns it has, for messages
	filesHere bool     // a part of a multi-part checkpoint or a sidecar: its file actions must be in it
	// unaccounted counts the rows that hold no action of a column the file has; first says
	// where the first of them is.
	unaccounted int64
	first       string
	// sidecars and checkpointMetadata count the rows holding those actions.
	sidecars, checkpointMetadata int64
}

// pqMissingColumnsRule decides whether a checkpoint file read for its file actions that lacks
// the add or remove column is read as holding none of them, or is corrupt (VACUUM-SPEC 2.6: a
// missing column is never "no live files"). It holds none in two cases, and only these:
//
//   - The protocol's: a top-level V2 checkpoint that lists sidecars (a checkpointMetadata row
//     and at least one sidecar row) keeps every file action in its sidecars (PROTOCOL.md, V2
//     Spec: "either all … embedded inside itself or all of them should be in sidecar files").
//     A part of a multi-part checkpoint or a sidecar holds its own file actions: no exception.
//   - The rows': every row of the file holds exactly one action of a column the file has (the
//     reader counts them; two in one row is corrupt anyway) and none of them is a sidecar. A
//     row holds one action, so a row accounted for by another action cannot be an add or
//     remove lost with its column; a file of such rows lost nothing. This is the file a writer
//     that leaves out the columns that are null in all its rows writes (Spark wrote
//     delta-kernel-rs's parquet_row_group_skipping fixture so: parts 1 and 5 of its multi-part
//     checkpoint hold one txn row each and have only the txn column), and Spark, which reads a
//     missing column as nulls, reads it the same way. A row that holds none of the file's
//     actions could have been the lost add (or remove), and a sidecar row names file actions
//     elsewhere that such a file is not followed to: either makes the file corrupt.
func pqMissingColumnsRule(f pqMissingFacts) error {
	switch {
	case len(f.missing) == 0:
		return nil
	case !f.filesHere && f.sidecars > 0 && f.checkpointMetadata > 0:
		return nil
	case f.unaccounted == 0 && f.sidecars == 0:
		return nil
	}
	lacks := strings.Join(f.missing, " or ")
	has := "it has no action column"
	if len(f.present) > 0 {
		has = "its action columns: " + strings.Join(f.present, ", ")
	}
	if f.unaccounted > 0 {
		return pqCorruptf("the file has no %s column (it has %s) and %d of its rows hold none of these actions, the first %s: such a row may have held an %s lost with its column; "+
			"the file is damaged or its writer dropped columns: rewrite the checkpoint with Spark or delta-rs",
			lacks, has, f.unaccounted, f.first, lacks)
	}
	if f.filesHere {
		return pqCorruptf("the file has no %s column and holds %d sidecar actions: a part of a multi-part checkpoint or a sidecar holds its file actions itself; rewrite the checkpoint with Spark or delta-rs",
			lacks, f.sidecars)
	}
	return pqCorruptf("the file has no %s column and lists sidecars without a checkpointMetadata action, so it is not a V2 checkpoint: its file actions are nowhere; rewrite the checkpoint with Spark or delta-rs",
		lacks)
}

// pqCheckNames checks that no two children of group g have names equal but for case: an
// exact duplicate would let parquet-go's Column pick one of them arbitrarily, and names that
// differ only in case are read as one column by case-insensitive readers (Spark's default),
// so the file means different things to different engines. Only the groups this program reads
// are checked (the top level, the file-action groups, the deletion vectors and the generic
// groups it rebuilds), never the table's own columns in stats_parsed or
// partitionValues_parsed, which a case-sensitive table may legitimately spell so. A name
// that is not valid UTF-8 is corrupt too.
func pqCheckNames(g *parquet.Column, what string) error {
	children := g.Columns()
	for i, c := range children {
		if !utf8.ValidString(c.Name()) {
			return pqCorruptf("%s has a column named %q, which is not valid UTF-8", what, c.Name())
		}
		for _, d := range children[i+1:] {
			if strings.EqualFold(c.Name(), d.Name()) {
				if c.Name() == d.Name() {
					return pqCorruptf("%s has two columns named %s", what, c.Name())
				}
				return pqCorruptf("%s has columns %s and %s, whose names differ only in case", what, c.Name(), d.Name())
			}
		}
	}
	return nil
}

// pqChild returns the child of group g named exactly name, nil when there is none. A child
// whose name is name in another case (Add for add, DeletionVector for deletionVector) is
// ErrCorrupt rather than absent: names are case-sensitive, so it is not the column wanted,
// yet a case-insensitive reader would take it for that column; the file cannot be read one
// way with confidence. what names g in messages.
func pqChild(g *parquet.Column, name, what string) (*parquet.Column, error) {
	if c := g.Column(name); c != nil {
		return c, nil
	}
	for _, c := range g.Columns() {
		if strings.EqualFold(c.Name(), name) {
			return nil, pqCorruptf("%s has a column %s but none named %s: column names are case-sensitive", what, c.Name(), name)
		}
	}
	return nil, nil
}

// pqActionGroup checks that col, a top-level action column, is an optional group: a row holds
// one action, so every action column must be null in the rows of the others.
func pqActionGroup(col *parquet.Column) error {
	if col.Leaf() || !col.Optional() {
		return pqCorruptf("column %s is not an optional group", col.Name())
	}
	return nil
}

// cursor checks the leaf column col, named name in messages, against kinds and plans its
// reading when read is set (a column a read does not need is checked all the same: a file
// of the wrong schema is refused whatever is read of it).
func (p *pqPlan) cursor(col *parquet.Column, name string, read bool, kinds ...parquet.Kind) (*pqCursor, error) {
	if col == nil {
		return nil, nil
	}
	if !col.Leaf() {
		return nil, pqCorruptf("column %s is a group, want a value", name)
	}
	if col.MaxRepetitionLevel() != 0 {
		return nil, pqCorruptf("column %s is repeated", name)
	}
	kind, err := pqLeafKind(col, name)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(kinds, kind) {
		return nil, pqCorruptf("column %s has type %v, want %v", name, kind, kinds[0])
	}
	if kind == parquet.ByteArray && !pqIsString(col.Type()) {
		return nil, pqCorruptf("column %s is annotated as %v, want a string", name, col.Type())
	}
	if !read {
		return nil, nil
	}
	c := newPQCursor(col, name, kind)
	p.addCursor(c)
	return c, nil
}

// addCursor plans the reading of a leaf column.
func (p *pqPlan) addCursor(c *pqCursor) {
	p.cursors = append(p.cursors, c)
	p.chunks = append(p.chunks, parquetguard.Chunk{Column: c.index, Name: c.name, Codec: c.codec})
}

// pqIsString reports whether a BYTE_ARRAY column holds strings: annotated as one, or plain
// binary (which the values' UTF-8 check then guards), not a decimal or BSON.
func pqIsString(t parquet.Type) bool {
	if lt := t.LogicalType(); lt != nil && lt.Value != nil {
		switch lt.Value.(type) {
		case *format.StringType, *format.EnumType, *format.JsonType:
			return true
		}
		return false
	}
	if ct := t.ConvertedType(); ct != nil {
		switch *ct {
		case deprecated.UTF8, deprecated.Enum, deprecated.Json:
			return true
		}
		return false
	}
	return true
}

// leaves returns a function that plans the leaf column field of group g (named name in
// messages): nil when g has no such column, or when read is false (the column is then only
// checked); after the first error, held in *err, it plans nothing more.
func (p *pqPlan) leaves(g *parquet.Column, name string, err *error) func(field string, read bool, kinds ...parquet.Kind) *pqCursor {
	return func(field string, read bool, kinds ...parquet.Kind) *pqCursor {
		if *err != nil {
			return nil
		}
		var col *parquet.Column
		if col, *err = pqChild(g, field, "column group "+name); *err != nil {
			return nil
		}
		var c *pqCursor
		c, *err = p.cursor(col, name+"."+field, read, kinds...)
		return c
	}
}

// fileReader plans the columns of an add or remove group.
func (p *pqPlan) fileReader(g *parquet.Column, kind Kinds) (*pqFileReader, error) {
	if err := pqActionGroup(g); err != nil {
		return nil, err
	}
	name := g.Name()
	if err := pqCheckNames(g, "column group "+name); err != nil {
		return nil, err
	}
	r := &pqFileReader{kind: kind, def: byte(g.MaxDefinitionLevel())}
	var err error
	leaf := p.leaves(g, name, &err)
	ints := []parquet.Kind{parquet.Int64, parquet.Int32}
	// A read for Snapshot.Files reads only what a File holds (kindFileFields): on a checkpoint
	// of a million rows, each column left out is a column chunk neither fetched nor decoded.
	all := p.want&kindFileFields == 0
	r.path = leaf("path", true, parquet.ByteArray)
	r.size = leaf("size", p.want&kindNoSize == 0, ints...)
	r.dataChange = leaf("dataChange", all, parquet.Boolean)
	if kind == KindAdd {
		r.modificationTime = leaf("modificationTime", all, ints...)
	} else {
		r.deletionTimestamp = leaf("deletionTimestamp", true, ints...)
	}
	if err != nil {
		return nil, err
	}
	if r.path == nil {
		return nil, pqCorruptf("column group %s has no path column", name)
	}
	dv, err := pqChild(g, "deletionVector", "column group "+name)
	if err != nil {
		return nil, err
	}
	if dv == nil && p.want&kindDVRequired != 0 {
		// Read without the column, every deletion vector of the table would look absent and
		// its file unreferenced.
		return nil, pqCorruptf("column group %s has no deletionVector column, but the checkpoint's protocol has the deletionVectors feature", name)
	}
	if dv != nil {
		if dv.Leaf() || dv.Repeated() {
			return nil, pqCorruptf("column %s.deletionVector is not a group", name)
		}
		name := name + ".deletionVector"
		if err := pqCheckNames(dv, "column group "+name); err != nil {
			return nil, err
		}
		d := &pqDVReader{def: byte(dv.MaxDefinitionLevel())}
		leaf := p.leaves(dv, name, &err)
		d.storageType = leaf("storageType", true, parquet.ByteArray)
		d.pathOrInlineDv = leaf("pathOrInlineDv", true, parquet.ByteArray)
		d.offset = leaf("offset", true, parquet.Int32, parquet.Int64)
		d.sizeInBytes = leaf("sizeInBytes", true, parquet.Int32, parquet.Int64)
		d.cardinality = leaf("cardinality", true, ints...)
		if err != nil {
			return nil, err
		}
		// Without these two a deletion vector cannot be located; ignoring it could let VACUUM
		// delete a file a live add still needs.
		if d.storageType == nil || d.pathOrInlineDv == nil {
			return nil, pqCorruptf("column group %s lacks storageType or pathOrInlineDv", name)
		}
		r.dv = d
	}
	if kind == KindAdd && p.want&kindStats != 0 {
		r.statsWanted = true
		r.stats, r.statsRecords = p.statsCursors(g)
	}
	return r, nil
}

// statsCursors plans the statistics of add group g that hold numRecords: the stats string and
// stats_parsed.numRecords, each when g has it in the shape the protocol gives it. A column of
// another shape is passed over rather than refused: statistics are advisory (stats.go), and
// no deletion depends on them.
func (p *pqPlan) statsCursors(g *parquet.Column) (stats, records *pqCursor) {
	leaf := func(c *parquet.Column, name string, kinds ...parquet.Kind) *pqCursor {
		if c == nil || !c.Leaf() || c.MaxRepetitionLevel() != 0 {
			return nil
		}
		kind, err := pqLeafKind(c, name)
		if err != nil || !slices.Contains(kinds, kind) || (kind == parquet.ByteArray && !pqIsString(c.Type())) {
			return nil
		}
		cur := newPQCursor(c, name, kind)
		p.addCursor(cur)
		return cur
	}
	stats = leaf(g.Column("stats"), g.Name()+".stats", parquet.ByteArray)
	if sp := g.Column("stats_parsed"); sp != nil && !sp.Leaf() && sp.MaxRepetitionLevel() == 0 {
		records = leaf(sp.Column("numRecords"), g.Name()+".stats_parsed.numRecords", parquet.Int64, parquet.Int32)
	}
	return stats, records
}

// genericReader plans every leaf column of group g.
func (p *pqPlan) genericReader(g *parquet.Column, kind Kinds) (*pqGroupReader, error) {
	if err := pqActionGroup(g); err != nil {
		return nil, err
	}
	r := &pqGroupReader{kind: kind}
	var build func(c *parquet.Column, path string) (*pqNode, error)
	build = func(c *parquet.Column, path string) (*pqNode, error) {
		n := &pqNode{
			name:     c.Name(),
			def:      byte(c.MaxDefinitionLevel()),
			rep:      byte(c.MaxRepetitionLevel()),
			repeated: c.Repeated(),
			leafLo:   len(r.leaves),
		}
		if c.Leaf() {
			n.leaf = true
			kind, err := pqLeafKind(c, path)
			if err != nil {
				return nil, err
			}
			lc := newPQCursor(c, path, kind)
			r.encs = append(r.encs, pqJSONEncFor(c.Type(), kind))
			r.leaves = append(r.leaves, lc)
			p.addCursor(lc)
		} else {
			if err := pqCheckNames(c, "column group "+path); err != nil {
				return nil, err
			}
			n.isMap, n.isList = pqGroupAnnotation(c.Type())
			for _, child := range c.Columns() {
				cn, err := build(child, path+"."+child.Name())
				if err != nil {
					return nil, err
				}
				n.children = append(n.children, cn)
			}
			if len(n.children) == 0 {
				return nil, pqCorruptf("column group %s is empty", path)
			}
			if n.isMap || n.isList {
				// Both annotations wrap exactly one repeated group (or value, for legacy lists).
				if len(n.children) != 1 || !n.children[0].repeated {
					n.isMap, n.isList = false, false
				} else if n.isMap && n.children[0].leaf {
					n.isMap = false
				}
			}
		}
		n.leafHi = len(r.leaves)
		return n, nil
	}
	root, err := build(g, g.Name())
	if err != nil {
		return nil, err
	}
	r.root = root
	r.rows = make([][]pqEntry, len(r.leaves))
	return r, nil
}

func pqGroupAnnotation(t parquet.Type) (isMap, isList bool) {
	if lt := t.LogicalType(); lt != nil {
		switch lt.Value.(type) {
		case *format.MapType:
			return true, false
		case *format.ListType:
			return false, true
		}
	}
	if ct := t.ConvertedType(); ct != nil {
		switch *ct {
		case deprecated.Map, deprecated.MapKeyValue:
			return true, false
		case deprecated.List:
			return false, true
		}
	}
	return false, false
}

// count accounts for one row of a file that lacks the add or remove column: found actions,
// act the one decoded (nil for an action only seen present).
func (f *pqMissingFacts) count(found int, act *Action, row int64, index int) {
	if found == 0 {
		if f.unaccounted == 0 {
			f.first = fmt.Sprintf("row %d of row group %d", row, index)
		}
		f.unaccounted++
	}
	if act != nil && act.Sidecar != nil {
		f.sidecars++
	}
	if act != nil && act.CheckpointMetadata != nil {
		f.checkpointMetadata++
	}
}

// readRowGroup reads the rows of one row group in lockstep across all planned columns.
func (p *pqPlan) readRowGroup(ctx context.Context, src *parquetguard.Source, f *parquet.File, index int, rg parquet.RowGroup, fn func(*Action) error) error {
	chunks := rg.ColumnChunks()
	if len(chunks) != p.numLeaves || len(f.Metadata().RowGroups[index].Columns) != p.numLeaves {
		return pqCorruptf("row group %d has %d column chunks, the schema %d columns", index, len(chunks), p.numLeaves)
	}
	if err := src.LoadChunks(&f.Metadata().RowGroups[index], p.chunks); err != nil {
		return pqErr(err)
	}
	defer src.Drop()
	for _, c := range p.cursors {
		if err := c.open(src, chunks[c.index]); err != nil {
			return err
		}
	}
	defer func() {
		for _, c := range p.cursors {
			c.close()
		}
	}()
	numRows := rg.NumRows()
	for row := range numRows {
		// Cancellation is checked every few thousand rows, about once a page.
		if row%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var act *Action
		found := 0
		if p.add != nil {
			a, err := p.add.readRow()
			if err != nil {
				return err
			}
			if a != nil {
				act = a
				found++
			}
		}
		if p.remove != nil {
			a, err := p.remove.readRow()
			if err != nil {
				return err
			}
			if a != nil {
				act = a
				found++
			}
		}
		for _, r := range p.generic {
			a, err := r.readRow()
			if err != nil {
				return err
			}
			if a != nil {
				act = a
				found++
			}
		}
		for _, r := range p.presence {
			there, err := r.readRow()
			if err != nil {
				return err
			}
			if there {
				found++
			}
		}
		if found > 1 {
			return pqCorruptf("row %d of row group %d holds %d actions", row, index, found)
		}
		if len(p.missing) > 0 {
			p.facts.count(found, act, row, index)
		}
		if act != nil && act.kind()&p.want != 0 {
			if err := fn(act); err != nil {
				return err
			}
		}
	}
	// Every column must end with the row group; extra values mean the levels are inconsistent.
	for _, c := range p.cursors {
		more, err := c.more()
		if err != nil {
			return err
		}
		if more {
			return pqCorruptf("column %s has more values than the %d rows of row group %d", c.name, numRows, index)
		}
	}
	// Pages after the last entry (pages without entries) are checked too, as they are when a
	// chunk is held whole.
	if err := src.CheckRest(); err != nil {
		return pqErr(err)
	}
	return nil
}
