package inventory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/deltavacuum/deltavacuum/internal/parquetguard"
	"github.com/deltavacuum/deltavacuum/sql"
	"github.com/deltavacuum/deltavacuum/storage"
)

// pqFile is an open Parquet file, read through parquetguard like a checkpoint: a damaged or
// hostile inventory file is refused rather than allowed to exhaust memory.
type pqFile struct {
	name string // for messages
	src  *parquetguard.Source
	f    *parquet.File
}

// pqErr turns an error of parquetguard into one that names the inventory file.
func pqErr(name string, err error) error {
	var c *parquetguard.CorruptError
	if errors.As(err, &c) {
		return fmt.Errorf("inventory %s: not a readable Parquet file: %s", name, c.Msg)
	}
	var r *parquetguard.ReadError
	if errors.As(err, &r) {
		return fmt.Errorf("inventory %s: %s: %w", name, r.What, r.Err)
	}
	return fmt.Errorf("inventory %s: %w", name, err)
}

// fail describes an error reported by parquet-go while doing what.
func (p *pqFile) fail(what string, err error) error { return pqErr(p.name, p.src.Fail(what, err)) }

// openParquet opens the Parquet file key of store and reads its footer.
func openParquet(ctx context.Context, store storage.Store, key, name string) (*pqFile, error) {
	r, err := store.Open(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("inventory %s: %w", name, err)
	}
	src := parquetguard.NewSource(r)
	f, err := src.Open()
	if err != nil {
		r.Close()
		return nil, pqErr(name, err)
	}
	return &pqFile{name: name, src: src, f: f}, nil
}

func (p *pqFile) Close() error { return p.src.R.Close() }

// columns returns the top-level columns of the file with their SQL types.
func (p *pqFile) columns() []column {
	var cols []column
	for _, c := range p.f.Root().Columns() {
		cols = append(cols, pqColumn(c))
	}
	return cols
}

// pqColumn describes a top-level column. Only primitive, non-repeated columns can be read.
func pqColumn(c *parquet.Column) column {
	typ, k := pqType(c)
	return column{name: c.Name(), typ: typ, kind: k}
}

func pqType(c *parquet.Column) (string, kind) {
	if c.Repeated() {
		elem, _ := pqTypeOf(c)
		return "ARRAY<" + elem + ">", kindOther
	}
	return pqTypeOf(c)
}

// pqTypeOf names the type of c (ignoring its repetition) as Spark would, and says how it is read.
func pqTypeOf(c *parquet.Column) (string, kind) {
	if !c.Leaf() {
		var lt *format.LogicalType
		if t := c.Type(); t != nil {
			lt = t.LogicalType()
		}
		children := c.Columns()
		var lv any
		if lt != nil {
			lv = lt.Value
		}
		switch lv.(type) {
		case *format.ListType:
			if len(children) == 1 {
				elem := children[0]
				if !elem.Leaf() && len(elem.Columns()) == 1 {
					elem = elem.Columns()[0]
				}
				t, _ := pqTypeOf(elem)
				return "ARRAY<" + t + ">", kindOther
			}
		case *format.MapType:
			if len(children) == 1 && len(children[0].Columns()) == 2 {
				k, _ := pqTypeOf(children[0].Columns()[0])
				v, _ := pqTypeOf(children[0].Columns()[1])
				return "MAP<" + k + ", " + v + ">", kindOther
			}
		}
		parts := make([]string, len(children))
		for i, ch := range children {
			t, _ := pqType(ch)
			parts[i] = ch.Name() + ": " + t
		}
		return "STRUCT<" + strings.Join(parts, ", ") + ">", kindOther
	}
	t := c.Type()
	var lt *format.LogicalType
	if t != nil {
		lt = t.LogicalType()
	}
	var lv any
	if lt != nil {
		lv = lt.Value
	}
	switch t.Kind() {
	case parquet.Boolean:
		return "BOOLEAN", kindBool
	case parquet.Int32, parquet.Int64:
		switch v := lv.(type) {
		case *format.IntType:
			if !v.IsSigned {
				return fmt.Sprintf("UINT%d", v.BitWidth), kindInt
			}
			switch v.BitWidth {
			case 8:
				return "TINYINT", kindInt
			case 16:
				return "SMALLINT", kindInt
			case 32:
				return "INT", kindInt
			}
			return "BIGINT", kindInt
		case *format.TimestampType:
			if !v.IsAdjustedToUTC {
				return "TIMESTAMP_NTZ", kindTimestamp
			}
			return "TIMESTAMP", kindTimestamp
		case *format.DateType:
			return "DATE", kindOther
		case *format.TimeType:
			return "TIME", kindOther
		case *format.DecimalType:
			return fmt.Sprintf("DECIMAL(%d,%d)", v.Precision, v.Scale), kindOther
		case nil:
			if t.Kind() == parquet.Int32 {
				return "INT", kindInt
			}
			return "BIGINT", kindInt
		}
		return strings.ToUpper(lt.String()), kindOther
	case parquet.Int96:
		return "TIMESTAMP", kindTimestamp
	case parquet.Float:
		return "FLOAT", kindFloat
	case parquet.Double:
		return "DOUBLE", kindFloat
	case parquet.ByteArray:
		switch v := lv.(type) {
		case *format.StringType, *format.EnumType, *format.JsonType:
			return "STRING", kindString
		case *format.DecimalType:
			return fmt.Sprintf("DECIMAL(%d,%d)", v.Precision, v.Scale), kindOther
		case nil:
			return "BINARY", kindOther
		}
		return strings.ToUpper(lt.String()), kindOther
	case parquet.FixedLenByteArray:
		switch v := lv.(type) {
		case *format.DecimalType:
			return fmt.Sprintf("DECIMAL(%d,%d)", v.Precision, v.Scale), kindOther
		case *format.UUIDType:
			return "UUID", kindOther
		}
		return "BINARY", kindOther
	}
	return strings.ToUpper(t.String()), kindOther
}

// pqWant is a column to read: its name in the file and its cell in the row.
type pqWant struct {
	name string
	cell int
	// kind is the kind the caller's schema gives the column; the file's column must be read as
	// that kind (an INT32 file column is fine for a BIGINT, a STRING one is not).
	kind kind
}

// pqCol reads the values of one column chunk after another.
type pqCol struct {
	col   *parquet.Column
	cell  int
	kind  kind
	conv  func(parquet.Value) (sql.Value, error)
	pages parquetguard.Pages
	vals  parquet.ValueReader
	buf   []parquet.Value
	i, n  int
	name  string
}

// scan reads the wanted columns of every row, in file order, into a row of width cells (the
// others NULL) and calls fn. A wanted column the file does not have is NULL in every row.
func (p *pqFile) scan(ctx context.Context, wants []pqWant, width int, fn func(row []sql.Value) error) error {
	var cols []*pqCol
	for _, w := range wants {
		c := pqLookup(p.f.Root(), w.name)
		if c == nil {
			continue
		}
		typ, k := pqType(c)
		if k != w.kind && !(k == kindInt && w.kind == kindFloat) {
			return &SchemaError{Location: p.name, Found: fields(p.columns()),
				Problems: []string{fmt.Sprintf("column %s is %s in this file, which does not match the inventory's schema", c.Name(), typ)}}
		}
		conv, err := pqConverter(c, w.kind)
		if err != nil {
			return fmt.Errorf("inventory %s: column %s: %w", p.name, c.Name(), err)
		}
		cols = append(cols, &pqCol{col: c, cell: w.cell, kind: w.kind, conv: conv, buf: make([]parquet.Value, 512), name: c.Name()})
	}
	defer func() {
		for _, c := range cols {
			c.close()
		}
	}()
	load := make([]parquetguard.Chunk, len(cols))
	for i, c := range cols {
		load[i] = parquetguard.Chunk{Column: c.col.Index(), Name: c.name}
		if codec := c.col.Compression(); codec != nil {
			load[i].Codec = codec.CompressionCodec()
		}
	}
	defer p.src.Drop()
	row := make([]sql.Value, width)
	var rowNum int64
	rowGroups, meta := p.f.RowGroups(), p.f.Metadata().RowGroups
	if len(rowGroups) != len(meta) {
		return fmt.Errorf("inventory %s: not a readable Parquet file: %d row groups, %d described", p.name, len(rowGroups), len(meta))
	}
	for g, rg := range rowGroups {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := rg.NumRows()
		chunks := rg.ColumnChunks()
		for _, c := range cols {
			c.close()
		}
		// The chunks are fetched and their pages checked before parquet-go reads them.
		if err := p.src.LoadChunks(&meta[g], load); err != nil {
			return pqErr(p.name, err)
		}
		for _, c := range cols {
			idx := c.col.Index()
			if idx < 0 || idx >= len(chunks) {
				return fmt.Errorf("inventory %s: row group lacks column %s", p.name, c.name)
			}
			if err := c.pages.Open(chunks[idx]); err != nil {
				return p.fail("opening column "+c.name, err)
			}
		}
		for i := int64(0); i < n; i++ {
			if i%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			rowNum++
			for _, c := range cols {
				v, err := c.next(p)
				if err != nil {
					return err
				}
				row[c.cell], err = c.conv(v)
				if err != nil {
					return fmt.Errorf("inventory %s row %d: column %s: %w", p.name, rowNum, c.name, err)
				}
			}
			if err := fn(row); err != nil {
				return fmt.Errorf("inventory %s row %d: %w", p.name, rowNum, err)
			}
		}
		// Pages after the last row are checked too, as they are when a chunk is held whole.
		if err := p.src.CheckRest(); err != nil {
			return pqErr(p.name, err)
		}
	}
	return nil
}

// pqLookup finds a top-level column by name, exactly or else ignoring case.
func pqLookup(root *parquet.Column, name string) *parquet.Column {
	if c := root.Column(name); c != nil {
		return c
	}
	for _, c := range root.Columns() {
		if strings.EqualFold(c.Name(), name) {
			return c
		}
	}
	return nil
}

func (c *pqCol) close() {
	c.pages.Close()
	c.vals = nil
	c.i, c.n = 0, 0
}

// next returns the column's value in the next row.
func (c *pqCol) next(p *pqFile) (parquet.Value, error) {
	for c.i >= c.n {
		if c.vals != nil {
			var n int
			err := parquetguard.Protect(func() error {
				var err error
				n, err = c.vals.ReadValues(c.buf)
				return err
			})
			c.i, c.n = 0, n
			if n > 0 {
				break
			}
			if err != nil && err != io.EOF {
				return parquet.Value{}, p.fail("reading column "+c.name, err)
			}
			c.vals = nil
			continue
		}
		page, err := c.pages.Next()
		if err == io.EOF {
			return parquet.Value{}, fmt.Errorf("inventory %s: column %s has fewer values than its row group has rows", p.name, c.name)
		}
		if err != nil {
			return parquet.Value{}, p.fail("reading column "+c.name, err)
		}
		c.vals = page.Values()
	}
	v := c.buf[c.i]
	c.i++
	return v, nil
}

// pqConverter returns the function that turns a value of c into a sql.Value of kind k.
func pqConverter(c *parquet.Column, k kind) (func(parquet.Value) (sql.Value, error), error) {
	t := c.Type()
	var lv any
	if lt := t.LogicalType(); lt != nil {
		lv = lt.Value
	}
	null := func(v parquet.Value) bool { return v.IsNull() }
	switch t.Kind() {
	case parquet.Boolean:
		return func(v parquet.Value) (sql.Value, error) {
			if null(v) {
				return sql.NullValue(), nil
			}
			return sql.BoolValue(v.Boolean()), nil
		}, nil
	case parquet.Int32, parquet.Int64:
		unsigned := false
		var scale int64 // divisor to milliseconds; 0 for integers
		switch v := lv.(type) {
		case *format.IntType:
			unsigned = !v.IsSigned
		case *format.TimestampType:
			switch v.Unit.Value.(type) {
			case *format.MilliSeconds:
				scale = 1
			case *format.MicroSeconds:
				scale = 1000
			case *format.NanoSeconds:
				scale = 1000_000
			default:
				return nil, fmt.Errorf("timestamp unit %s", v.Unit.String())
			}
		}
		is64 := t.Kind() == parquet.Int64
		return func(v parquet.Value) (sql.Value, error) {
			if null(v) {
				return sql.NullValue(), nil
			}
			var n int64
			switch {
			case is64 && unsigned:
				u := v.Uint64()
				if u > math.MaxInt64 {
					return sql.Value{}, fmt.Errorf("value %d is out of range", u)
				}
				n = int64(u)
			case is64:
				n = v.Int64()
			case unsigned:
				n = int64(v.Uint32())
			default:
				n = int64(v.Int32())
			}
			if scale > 0 {
				n = floorDiv(n, scale)
			}
			if k == kindFloat {
				return sql.FloatValue(float64(n)), nil
			}
			return sql.IntValue(n), nil
		}, nil
	case parquet.Int96:
		return func(v parquet.Value) (sql.Value, error) {
			if null(v) {
				return sql.NullValue(), nil
			}
			return sql.IntValue(int96Millis(v.Int96())), nil
		}, nil
	case parquet.Float:
		return func(v parquet.Value) (sql.Value, error) {
			if null(v) {
				return sql.NullValue(), nil
			}
			return sql.FloatValue(float64(v.Float())), nil
		}, nil
	case parquet.Double:
		return func(v parquet.Value) (sql.Value, error) {
			if null(v) {
				return sql.NullValue(), nil
			}
			return sql.FloatValue(v.Double()), nil
		}, nil
	case parquet.ByteArray:
		return func(v parquet.Value) (sql.Value, error) {
			if null(v) {
				return sql.NullValue(), nil
			}
			return sql.StringValue(string(v.ByteArray())), nil
		}, nil
	}
	return nil, fmt.Errorf("values of type %v cannot be read", t)
}

// int96Millis converts a legacy INT96 timestamp (nanoseconds of the day, then the Julian day) to
// milliseconds since the epoch.
func int96Millis(v [3]uint32) int64 {
	nanos := int64(uint64(v[1])<<32 | uint64(v[0]))
	day := int64(v[2])
	const julianEpoch = 2440588 // Julian day of 1970-01-01
	return (day-julianEpoch)*86_400_000 + floorDiv(nanos, 1_000_000)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// parquetTable is one Parquet file or several with one schema (that of the first file).
type parquetTable struct {
	name  string
	store storage.Store
	files []string // keys in store
	names []string // the files' names for messages
	cols  []column
}

// newParquetTable reads the schema of the first file.
func newParquetTable(ctx context.Context, name string, store storage.Store, keys, names []string) (*parquetTable, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("inventory %s: no Parquet files", name)
	}
	f, err := openParquet(ctx, store, keys[0], names[0])
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return &parquetTable{name: name, store: store, files: keys, names: names, cols: f.columns()}, nil
}

func (t *parquetTable) location() string  { return t.name }
func (t *parquetTable) columns() []column { return t.cols }

func (t *parquetTable) scan(ctx context.Context, need []bool, fn func(row []sql.Value) error) error {
	var wants []pqWant
	for i, c := range t.cols {
		if need[i] {
			wants = append(wants, pqWant{name: c.name, cell: i, kind: c.kind})
		}
	}
	for i, key := range t.files {
		f, err := openParquet(ctx, t.store, key, t.names[i])
		if err != nil {
			return err
		}
		err = f.scan(ctx, wants, len(t.cols), fn)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
