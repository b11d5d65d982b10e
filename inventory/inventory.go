package inventory

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/spill"
	"github.com/deltavacuum/deltavacuum/sql"
	"github.com/deltavacuum/deltavacuum/storage"
)

// Format says how to read an inventory.
type Format string

// The formats. FormatAuto finds the format: a directory with _delta_log is a Delta table; a
// manifest (manifest.json, <rule>-manifest.json) is an S3 Inventory or Azure blob inventory
// report; .csv files are CSV and .parquet files Parquet, read as an Azure blob inventory report
// when their columns are those of one (Name, Content-Length, Last-Modified, ...).
const (
	FormatAuto    Format = "auto"
	FormatDelta   Format = "delta"
	FormatParquet Format = "parquet"
	FormatCSV     Format = "csv"
	FormatAzure   Format = "azure"
	FormatS3      Format = "s3"
)

// ParseFormat parses a format name, ignoring case; "" is FormatAuto.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case "":
		return FormatAuto, nil
	case FormatAuto, FormatDelta, FormatParquet, FormatCSV, FormatAzure, FormatS3:
		return f, nil
	}
	return "", fmt.Errorf("inventory format %q is not one of auto, delta, parquet, csv, azure, s3", s)
}

// Source is the inventory of a VACUUM ... USING INVENTORY.
type Source struct {
	// Location is a local path, a file:// URI or (with Options.Open) an object-store URI. With a
	// Query it may be empty: the query's FROM path is used; it must be set when FROM names a
	// table (the caller resolves the name).
	Location string
	// Format is "" or FormatAuto to detect it. With a Query it may be empty: the format of
	// FROM (delta.`path`, parquet.`path`, csv.`path`) is used.
	Format Format
	// Query is nil for a plain table or file. When set, its FROM gives the location and format
	// (unless Location and Format are set), its select list the inventory's columns (which must
	// include the required ones), and its WHERE condition the rows.
	Query *sql.Query
}

// Options configure Open.
type Options struct {
	// Open opens a store rooted at location, a URI: file:///path for local paths, or the URI of a
	// bucket or container root (s3://bucket/, abfss://container@account.dfs.core.windows.net/) or
	// of a Delta table. The default, OpenLocal, opens local paths only.
	Open func(ctx context.Context, location string) (storage.Store, error)
	// RowsInMemory is the number of rows inside the table root kept in memory (about 140 bytes
	// each); beyond it they are written, sorted, as runs to one temporary file and Walk merges
	// the runs. 0 is 2,000,000 (about 300 MB at the peak).
	RowsInMemory int
	// SpillDir is the folder of that temporary file; "" is os.TempDir() ($TMPDIR). On Unix its
	// name is removed as soon as it is created, so nothing is left behind, even by a crash.
	SpillDir string
}

// Listing is the inventory's view of a table: its rows inside the table root, sorted, as a
// storage listing.
type Listing struct {
	inventory string
	root      string
	entries   []entry // the rows in memory; sorted and merged once Open returns
	budget    int     // entries kept in memory before a run is written
	spillDir  string
	spill     *spill.File[entry] // nil while everything fits in memory
	countMu   sync.Mutex
	counted   bool // n is known
	n         int  // entries after merging rows of one key, across runs (Len)
	rows      int64
	ignored   int64
	invalid   int64
	skipped   int64
}

// entry is one object of the listing. Only the rows inside the table are kept, by key.
type entry struct {
	key   string // relative to the table root; directories end in '/'
	size  int64
	mtime int64 // milliseconds since the epoch
	dir   bool
	timed bool // mtime is known (false for a directory row without modificationTime)
}

// Open reads the inventory's schema and checks it (a *SchemaError, matching ErrInvalidSchema,
// before any row is read), then reads the rows and returns a Listing of those inside tableRoot,
// a URI such as file:///data/t, s3://bucket/t or abfss://c@acct.dfs.core.windows.net/t.
//
// Rows outside the root are counted, not kept. A row inside the root without isDir, or a file
// row without length or modificationTime, is an error (ErrInvalidRow), as is a value of a CSV
// column that is not of the column's required type (ErrInvalidSchema).
func Open(ctx context.Context, src Source, tableRoot string, opts Options) (*Listing, error) {
	r, err := parseRoot(tableRoot)
	if err != nil {
		return nil, err
	}
	locStr, f, err := src.resolve()
	if err != nil {
		return nil, err
	}
	l, err := parseLocation(locStr)
	if err != nil {
		return nil, err
	}
	if opts.Open == nil {
		opts.Open = OpenLocal
	}
	o := &opener{open: opts.Open, stores: map[string]storage.Store{}}
	t, err := o.table(ctx, l, f, r)
	if err != nil {
		return nil, err
	}
	p, err := newPlan(t, src.Query)
	if err != nil {
		return nil, err
	}
	li := &Listing{inventory: t.location(), root: tableRoot, budget: opts.RowsInMemory, spillDir: opts.SpillDir}
	if li.budget <= 0 {
		li.budget = defaultRowsInMemory
	}
	p.listing, p.root = li, r
	if err := t.scan(ctx, p.need, p.consume); err != nil {
		li.Close()
		return nil, err
	}
	if m, ok := t.(*mappedTable); ok {
		li.skipped = m.skipped
	}
	if err := li.finish(); err != nil {
		li.Close()
		return nil, err
	}
	return li, nil
}

// resolve returns the location and format to read.
func (s Source) resolve() (string, Format, error) {
	loc, f := s.Location, s.Format
	if s.Query != nil {
		from := s.Query.From
		if loc == "" {
			if !from.IsPath() {
				return "", "", fmt.Errorf("inventory query reads the table %s: the caller must resolve table names to a location (Source.Location)", from.String())
			}
			loc = from.Path
		}
		if f == "" {
			f = Format(from.Format)
		}
	}
	if loc == "" {
		return "", "", errors.New("inventory: no location given")
	}
	if strings.EqualFold(string(f), "json") {
		return "", "", fmt.Errorf("inventory %s: JSON inventories are not supported; use Delta, Parquet or CSV", loc)
	}
	f, err := ParseFormat(string(f))
	return loc, f, err
}

// plan is how the rows of a table become entries: the query's columns and condition, and the
// required columns.
type plan struct {
	t       table
	cols    []column
	query   *sql.Query
	req     [numRequired]int // indexes in cols
	need    []bool
	refs    map[string]int // WHERE columns as written -> index in cols
	row     []sql.Value
	rowFn   sql.Row
	listing *Listing
	root    root
}

func newPlan(t table, q *sql.Query) (*plan, error) {
	cols := t.columns()
	p := &plan{t: t, cols: cols, query: q, need: make([]bool, len(cols)), refs: map[string]int{}}
	find := func(name, what string) (int, error) {
		switch i := lookup(cols, name); i {
		case -1:
			return 0, fmt.Errorf("inventory query: the column %s (in %s) does not exist in %s; its columns are: %s", name, what, t.location(), columnList(cols))
		case -2:
			return 0, fmt.Errorf("inventory query: the column %s (in %s) is ambiguous in %s: several columns have that name in different cases", name, what, t.location())
		default:
			return i, nil
		}
	}
	out := make([]int, len(cols))
	for i := range cols {
		out[i] = i
	}
	if q != nil && q.Columns != nil {
		out = out[:0]
		for _, name := range q.Columns {
			i, err := find(name, "the select list")
			if err != nil {
				return nil, err
			}
			out = append(out, i)
		}
	}
	outCols := make([]column, len(out))
	for i, j := range out {
		outCols[i] = cols[j]
	}
	idx, err := checkRequired(t.location(), outCols)
	if err != nil {
		return nil, err
	}
	for r := range idx {
		p.req[r] = out[idx[r]]
		p.need[p.req[r]] = true
	}
	if q != nil && q.Where != nil {
		// The columns of the condition only: a selected column needs no reading.
		for _, name := range (&sql.Query{Where: q.Where}).ReferencedColumns() {
			i, err := find(name, "WHERE")
			if err != nil {
				return nil, err
			}
			if cols[i].kind == kindOther {
				return nil, fmt.Errorf("inventory query: the column %s of %s is %s, which this program cannot evaluate in WHERE", cols[i].name, t.location(), cols[i].typ)
			}
			p.need[i] = true
			p.refs[name] = i
		}
		p.rowFn = func(name string) (sql.Value, bool) {
			i, ok := p.refs[name]
			if !ok {
				return sql.Value{}, false
			}
			return p.row[i], true
		}
	}
	return p, nil
}

func columnList(cols []column) string {
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.name + " " + c.typ)
	}
	return b.String()
}

// consume turns one row into an entry of the listing, or counts it.
func (p *plan) consume(row []sql.Value) error {
	for r := range numRequired {
		i := p.req[r]
		if p.cols[i].kind != kindText {
			continue
		}
		v, ok := textValue(row[i], requiredKinds[r])
		if !ok {
			return &SchemaError{Location: p.t.location(), Found: fields(p.cols),
				Problems: []string{fmt.Sprintf("the CSV column %s holds %q, which is not %s", p.cols[i].name, row[i].Str(), requiredTypes[r])}}
		}
		row[i] = v
	}
	if p.rowFn != nil {
		p.row = row
		ok, err := p.query.Match(p.rowFn)
		if err != nil {
			return fmt.Errorf("inventory query: WHERE %s: %w", p.query.Where, err)
		}
		if !ok {
			return nil
		}
	}
	l := p.listing
	l.rows++
	pv := row[p.req[colPath]]
	if pv.IsNull() {
		l.ignored++
		return nil
	}
	key, m := p.root.key(pv.Str())
	switch m {
	case outside:
		l.ignored++
		return nil
	case atRoot:
		return nil
	case invalid:
		l.invalid++
		return nil
	}
	// The key is a substring of the row's path: copy it, so that the listing holds the keys only.
	e := entry{key: strings.Clone(key)}
	isDir := row[p.req[colIsDir]]
	switch {
	case !isDir.IsNull():
		e.dir = isDir.Bool()
	case !strings.HasSuffix(key, "/"):
		return fmt.Errorf("%w: %q has no isDir", ErrInvalidRow, pv.Str())
	}
	if strings.HasSuffix(key, "/") {
		e.dir = true
	}
	if e.dir {
		if !strings.HasSuffix(e.key, "/") {
			e.key += "/"
		}
	} else {
		size := row[p.req[colLength]]
		if size.IsNull() {
			return fmt.Errorf("%w: the file %q has no length", ErrInvalidRow, pv.Str())
		}
		if size.Int() < 0 {
			return fmt.Errorf("%w: the file %q has a negative length %d", ErrInvalidRow, pv.Str(), size.Int())
		}
		e.size = size.Int()
	}
	if mt := row[p.req[colModTime]]; !mt.IsNull() {
		e.mtime, e.timed = mt.Int(), true
	} else if !e.dir {
		return fmt.Errorf("%w: the file %q has no modificationTime", ErrInvalidRow, pv.Str())
	}
	return l.add(e)
}

// add keeps an entry, writing the entries in memory as a run when they reach the budget.
func (l *Listing) add(e entry) error {
	l.entries = append(l.entries, e)
	if len(l.entries) >= l.budget {
		return l.spillBuffer()
	}
	return nil
}

// finish sorts the entries in memory.
func (l *Listing) finish() error {
	l.sort()
	return nil
}

// compareKeys orders keys component by component, names in byte order: a directory comes right
// before its contents, and the entries of a directory in byte order of their names, as
// storage.Store.Walk promises. It is byte order with '/' below every other byte.
func compareKeys(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		switch {
		case x == '/':
			return -1
		case y == '/':
			return 1
		case x < y:
			return -1
		}
		return 1
	}
	return len(a) - len(b)
}

// compareEntries orders entries by key (compareKeys) and the rows of one key from the earliest
// to the latest: a row without modificationTime before one with it, then by modificationTime;
// rows alike in those are ordered by dir and size, so that which one is kept never depends on
// the order of the rows or on how they were split into runs.
func compareEntries(a, b entry) int {
	if c := compareKeys(a.key, b.key); c != 0 {
		return c
	}
	switch {
	case a.timed != b.timed:
		if a.timed {
			return 1
		}
		return -1
	case a.mtime < b.mtime:
		return -1
	case a.mtime > b.mtime:
		return 1
	case a.dir != b.dir:
		if a.dir {
			return 1
		}
		return -1
	case a.size < b.size:
		return -1
	case a.size > b.size:
		return 1
	}
	return 0
}

// sort orders the entries in memory and merges rows of one key, keeping the latest (as Spark
// does).
func (l *Listing) sort() {
	l.entries = spill.Sort(l.entries, entryOrder)
	if l.spill == nil {
		l.entries = slices.Clip(l.entries)
	}
}

// Len returns the number of entries the inventory has inside the table root (directories
// implied by deeper paths not counted), rows of one key counted once. For a listing that
// spilled, the first call counts them with one pass over its temporary file (the cost of a Walk
// without fn); it returns -1 when that file cannot be read (a Walk reports why).
func (l *Listing) Len() int {
	if l.spill == nil {
		return len(l.entries)
	}
	return l.count()
}

// Rows returns the number of inventory rows read that the query's WHERE kept (all of them
// without a query), not counting the rows Skipped left out before.
func (l *Listing) Rows() int64 { return l.rows }

// Ignored returns the number of those rows that lie outside the table root or have no path.
func (l *Listing) Ignored() int64 { return l.ignored }

// Skipped returns the number of rows of a cloud inventory report that describe no current object:
// blob snapshots, versions that are not current and deleted blobs (Azure), versions that are not
// the latest and delete markers (S3).
func (l *Listing) Skipped() int64 { return l.skipped }

// Invalid returns the number of rows inside the table root whose path is not a clean key (an
// empty, "." or ".." component): they are left out of the listing, so never deleted.
func (l *Listing) Invalid() int64 { return l.invalid }

// Inventory returns the location of the inventory.
func (l *Listing) Inventory() string { return l.inventory }

// Location returns the table root the listing is relative to.
func (l *Listing) Location() string { return l.root }

// Walk implements the Walk of storage.Store over the inventory's rows inside the table root:
// keys are relative to the root and raw (as the inventory writes them, never percent-decoded);
// a directory is reported right before its contents, the entries of one directory in byte order
// of their names. Directories with a row of their own are reported with its modificationTime;
// directories implied by deeper rows with a zero ModTime. When fn returns storage.SkipDir for a
// directory, its contents are skipped; any other error stops the walk and is returned. The root
// itself is not reported. A prefix no row lies below is storage.ErrNotExist.
func (l *Listing) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		return fmt.Errorf("inventory listing: prefix %q is not a directory key", prefix)
	}
	it, err := l.iter()
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(l) // its cleanup closes the temporary file the walk reads
	var e *entry
	if prefix != "" && l.spill == nil {
		start, _ := slices.BinarySearchFunc(l.entries, prefix, func(e entry, p string) int { return compareKeys(e.key, p) })
		it.(*sliceIter).i = start
	}
	// The keys below a prefix follow every key ordered before it (compareKeys puts a directory
	// right before its contents): skip those, then the first one left must lie below it.
	for i := 0; ; i++ {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if e, err = it.Next(); err != nil {
			return err
		}
		if e == nil || compareKeys(e.key, prefix) >= 0 {
			break
		}
	}
	if prefix != "" && (e == nil || !strings.HasPrefix(e.key, prefix)) {
		return fmt.Errorf("%w: %s in the inventory of %s", storage.ErrNotExist, prefix, l.root)
	}
	open := []string{prefix} // the directories reported, each a prefix of the next
	skip := ""
	for i := 0; e != nil; i++ {
		if i > 0 {
			if e, err = it.Next(); err != nil {
				return err
			}
			if e == nil {
				break
			}
		}
		if !strings.HasPrefix(e.key, prefix) {
			break
		}
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if skip != "" {
			if strings.HasPrefix(e.key, skip) {
				continue
			}
			skip = ""
		}
		if e.key == prefix {
			continue
		}
		for len(open) > 1 && !strings.HasPrefix(e.key, open[len(open)-1]) {
			open = open[:len(open)-1]
		}
		// Report the directories between the deepest one open and the entry.
		skipped := false
		top := open[len(open)-1]
		for j := len(top); j < len(e.key)-1; j++ {
			if e.key[j] != '/' {
				continue
			}
			d := e.key[:j+1]
			err := fn(storage.Object{Key: d, IsDir: true})
			if errors.Is(err, storage.SkipDir) {
				skip, skipped = d, true
				break
			}
			if err != nil {
				return err
			}
			open = append(open, d)
		}
		if skipped {
			continue
		}
		o := storage.Object{Key: e.key, Size: e.size, IsDir: e.dir}
		if e.timed {
			o.ModTime = time.UnixMilli(e.mtime)
		}
		err := fn(o)
		switch {
		case errors.Is(err, storage.SkipDir):
			if e.dir {
				skip = e.key
			}
		case err != nil:
			return err
		case e.dir:
			open = append(open, e.key)
		}
	}
	return nil
}
