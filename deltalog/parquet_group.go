package deltalog

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// pqGroupReader rebuilds a whole column group (metaData, protocol, sidecar,
// checkpointMetadata) as the JSON object the action would be in a commit file, then decodes
// the action from it. Going through JSON keeps every field of the group, known or not, for
// Metadata.Raw, and makes a checkpoint row decode exactly like the same action in a commit.
type pqGroupReader struct {
	kind   Kinds
	root   *pqNode
	leaves []*pqCursor
	encs   []pqJSONEnc // per leaf
	rows   [][]pqEntry // per leaf, the entries of the current row
	vals   []byte      // JSON of the defined values of the current row
	out    []byte
}

// pqNode is one node of the schema tree of a generic group.
type pqNode struct {
	name          string
	def, rep      byte // maximum levels of the node
	repeated      bool
	leaf          bool
	isMap, isList bool
	children      []*pqNode
	// leafLo and leafHi delimit the node's leaves in pqGroupReader.leaves.
	leafLo, leafHi int
}

// pqEntry is one value slot of a leaf: its levels and, when defined, its JSON text in
// pqGroupReader.vals.
type pqEntry struct {
	rep, def byte
	lo, hi   int32
}

func (r *pqGroupReader) readRow() (*Action, error) {
	// The group is null in most rows, those of other actions; each of its columns then holds
	// a single null entry, which is skipped in bulk.
	first := r.leaves[0]
	def, err := first.next()
	if err != nil {
		return nil, err
	}
	if def < r.root.def {
		if first.rep != 0 {
			return nil, pqCorruptf("column %s: row starts with repetition level %d", first.name, first.rep)
		}
		for _, c := range r.leaves[1:] {
			c.skip()
		}
		return nil, nil
	}
	r.vals = r.vals[:0]
	for i, c := range r.leaves {
		if i > 0 {
			if def, err = c.next(); err != nil {
				return nil, err
			}
		}
		ents := r.rows[i][:0]
		for {
			e := pqEntry{rep: c.rep, def: def}
			if len(ents) == 0 && e.rep != 0 {
				return nil, pqCorruptf("column %s: row starts with repetition level %d", c.name, e.rep)
			}
			if def == c.maxDef {
				lo := len(r.vals)
				if r.vals, err = c.appendJSON(r.vals, r.encs[i]); err != nil {
					return nil, err
				}
				e.lo, e.hi = int32(lo), int32(len(r.vals))
			}
			ents = append(ents, e)
			if c.maxRep == 0 {
				break
			}
			rep, ok, err := c.peekRep()
			if err != nil {
				return nil, err
			}
			if !ok || rep == 0 {
				break
			}
			if def, err = c.next(); err != nil {
				return nil, err
			}
		}
		r.rows[i] = ents
	}
	spans := make([]pqSpan, len(r.leaves))
	for i := range spans {
		spans[i] = pqSpan{0, len(r.rows[i])}
	}
	out, _, err := r.appendNode(r.out[:0], r.root, spans)
	if err != nil {
		return nil, err
	}
	r.out = out
	act := &Action{}
	var target any
	switch r.kind {
	case KindMetadata:
		act.Metadata = &Metadata{}
		target = act.Metadata
	case KindProtocol:
		act.Protocol = &Protocol{}
		target = act.Protocol
	case KindSidecar:
		act.Sidecar = &Sidecar{}
		target = act.Sidecar
	case KindCheckpointMetadata:
		act.CheckpointMetadata = &CheckpointMetadata{}
		target = act.CheckpointMetadata
	}
	if err := unmarshalStrict(out, target); err != nil {
		return nil, pqCorruptf("column group %s: %v", r.root.name, err)
	}
	if err := act.validate(); err != nil {
		return nil, pqCorruptf("column group %s: %v", r.root.name, err)
	}
	return act, nil
}

// pqSpan delimits the entries of one leaf that belong to one instance of a node.
type pqSpan struct{ lo, hi int }

// appendNode appends the JSON of one instance of n (for a repeated n: one element) whose
// entries are spans; it reports false, appending nothing, when the instance is null.
func (r *pqGroupReader) appendNode(b []byte, n *pqNode, spans []pqSpan) ([]byte, bool, error) {
	first := r.rows[n.leafLo][spans[n.leafLo].lo]
	if first.def < n.def {
		return b, false, nil
	}
	switch {
	case n.leaf:
		return append(b, r.vals[first.lo:first.hi]...), true, nil
	case n.isList:
		rep := n.children[0]
		elem := rep
		// The standard three-level list wraps each element in a one-field group; the legacy
		// two-level forms use the repeated group itself as the element.
		if !rep.leaf && len(rep.children) == 1 && rep.name != "array" && rep.name != n.name+"_tuple" {
			elem = rep.children[0]
		}
		return r.appendArray(b, rep, elem, spans)
	case n.isMap:
		kv := n.children[0]
		elems, err := r.split(kv, spans)
		if err != nil {
			return nil, false, err
		}
		b = append(b, '{')
		for i, e := range elems {
			if i > 0 {
				b = append(b, ',')
			}
			start := len(b)
			var ok bool
			if b, ok, err = r.appendNode(b, kv.children[0], e); err != nil {
				return nil, false, err
			}
			if !ok {
				b = append(b, `""`...)
			} else if b[start] != '"' {
				// JSON object keys are strings; quote a non-string key's text.
				key := string(b[start:])
				if b, err = jsontext.AppendQuote(b[:start], key); err != nil {
					return nil, false, pqCorruptf("column %s: map key: %v", n.name, err)
				}
			}
			b = append(b, ':')
			ok = false
			if len(kv.children) > 1 {
				if b, ok, err = r.appendNode(b, kv.children[1], e); err != nil {
					return nil, false, err
				}
			}
			if !ok {
				b = append(b, "null"...)
			}
		}
		return append(b, '}'), true, nil
	}
	b = append(b, '{')
	empty := true
	for _, c := range n.children {
		start := len(b)
		if !empty {
			b = append(b, ',')
		}
		// Names were checked for valid UTF-8 when the group was planned.
		b, _ = jsontext.AppendQuote(b, c.name)
		b = append(b, ':')
		var ok bool
		var err error
		if c.repeated {
			b, ok, err = r.appendRepeated(b, c, spans)
		} else {
			b, ok, err = r.appendNode(b, c, spans)
		}
		if err != nil {
			return nil, false, err
		}
		if !ok {
			// Spark leaves null fields out of the JSON of an action.
			b = b[:start]
			continue
		}
		empty = false
	}
	return append(b, '}'), true, nil
}

// appendRepeated appends a repeated field without LIST annotation as a JSON array.
func (r *pqGroupReader) appendRepeated(b []byte, n *pqNode, spans []pqSpan) ([]byte, bool, error) {
	return r.appendArray(b, n, n, spans)
}

// appendArray appends the instances of the repeated node rep as a JSON array of elem, the node
// that holds each element (rep itself, or its one child in a three-level list).
func (r *pqGroupReader) appendArray(b []byte, rep, elem *pqNode, spans []pqSpan) ([]byte, bool, error) {
	elems, err := r.split(rep, spans)
	if err != nil {
		return nil, false, err
	}
	b = append(b, '[')
	for i, e := range elems {
		if i > 0 {
			b = append(b, ',')
		}
		var ok bool
		if b, ok, err = r.appendNode(b, elem, e); err != nil {
			return nil, false, err
		}
		if !ok {
			b = append(b, "null"...)
		}
	}
	return append(b, ']'), true, nil
}

// split divides the entries of the repeated node n into its elements. An entry whose
// repetition level is n's own starts a new element; deeper levels continue the current one.
func (r *pqGroupReader) split(n *pqNode, spans []pqSpan) ([][]pqSpan, error) {
	first := r.rows[n.leafLo][spans[n.leafLo].lo]
	if first.def < n.def {
		return nil, nil // present but empty
	}
	var elems [][]pqSpan
	for leaf := n.leafLo; leaf < n.leafHi; leaf++ {
		ents := r.rows[leaf]
		sp := spans[leaf]
		k := 0
		start := sp.lo
		for i := sp.lo; i <= sp.hi; i++ {
			if i < sp.hi && (i == sp.lo || ents[i].rep > n.rep) {
				continue
			}
			if i < sp.hi && ents[i].rep < n.rep {
				return nil, pqCorruptf("column %s: repetition level %d inside a repeated field of level %d", r.leaves[leaf].name, ents[i].rep, n.rep)
			}
			if leaf == n.leafLo {
				e := make([]pqSpan, len(spans))
				copy(e, spans)
				elems = append(elems, e)
			} else if k >= len(elems) {
				return nil, pqCorruptf("column %s: inconsistent repetition levels", r.leaves[leaf].name)
			}
			elems[k][leaf] = pqSpan{start, i}
			k++
			start = i
		}
		if k != len(elems) {
			return nil, pqCorruptf("column %s: inconsistent repetition levels", r.leaves[leaf].name)
		}
	}
	return elems, nil
}

// pqJSONEnc says how the values of a leaf become JSON.
type pqJSONEnc uint8

const (
	pqJSONString   pqJSONEnc = iota // strings: STRING, ENUM, JSON or unannotated BYTE_ARRAY
	pqJSONNumber                    // signed integers, floats
	pqJSONUnsigned                  // unsigned integers stored as INT32/INT64
	pqJSONBool
	pqJSONBase64 // fixed-length binary (UUID, DECIMAL): base64 like encoding/json does []byte
	pqJSONInt96  // legacy timestamps: the integer as a string
)

func pqJSONEncFor(t parquet.Type, kind parquet.Kind) pqJSONEnc {
	switch kind {
	case parquet.Boolean:
		return pqJSONBool
	case parquet.Int32, parquet.Int64:
		if lt := t.LogicalType(); lt != nil {
			if it, ok := lt.Value.(*format.IntType); ok && !it.IsSigned {
				return pqJSONUnsigned
			}
		}
		return pqJSONNumber
	case parquet.Float, parquet.Double:
		return pqJSONNumber
	case parquet.FixedLenByteArray:
		return pqJSONBase64
	case parquet.Int96:
		return pqJSONInt96
	}
	return pqJSONString
}

// appendJSON appends the current value as JSON.
func (c *pqCursor) appendJSON(b []byte, enc pqJSONEnc) ([]byte, error) {
	k := c.cur
	switch c.kind {
	case parquet.Boolean:
		return strconv.AppendBool(b, c.bits[k>>3]&(1<<(k&7)) != 0), nil
	case parquet.Int32:
		if enc == pqJSONUnsigned {
			return strconv.AppendUint(b, uint64(uint32(c.i32[k])), 10), nil
		}
		return strconv.AppendInt(b, int64(c.i32[k]), 10), nil
	case parquet.Int64:
		if enc == pqJSONUnsigned {
			return strconv.AppendUint(b, uint64(c.i64[k]), 10), nil
		}
		return strconv.AppendInt(b, c.i64[k], 10), nil
	case parquet.Float:
		return pqAppendJSONFloat(b, float64(c.f32[k]), 32), nil
	case parquet.Double:
		return pqAppendJSONFloat(b, c.f64[k], 64), nil
	case parquet.ByteArray:
		// A string that is not valid UTF-8 is refused, never mended with U+FFFD: it would
		// then name another file, or another setting, than the one written.
		v := c.data[c.offs[k]:c.offs[k+1]]
		q, err := jsontext.AppendQuote(b, v)
		if err != nil {
			return nil, pqCorruptf("column %s: a value is not valid UTF-8", c.name)
		}
		return q, nil
	case parquet.FixedLenByteArray:
		v := c.data[k*c.flen : (k+1)*c.flen]
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, v)
		return append(b, '"'), nil
	case parquet.Int96:
		var v deprecated.Int96
		for j := range v {
			v[j] = binary.LittleEndian.Uint32(c.data[12*k+4*j:])
		}
		return strconv.AppendQuote(b, v.String()), nil
	}
	return nil, pqCorruptf("column %s: unsupported type %v", c.name, c.kind)
}

// pqAppendJSONFloat appends f as a JSON number; JSON has no NaN or infinities, so those become
// strings as Spark's Jackson writes them.
func pqAppendJSONFloat(b []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.AppendQuote(b, strconv.FormatFloat(f, 'g', -1, bits))
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits)
}
