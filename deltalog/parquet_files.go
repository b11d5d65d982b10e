package deltalog

import (
	"math"
)

// pqFileReader decodes add or remove actions from their projected columns.
type pqFileReader struct {
	kind Kinds
	def  byte // definition level at which the action group is present

	path, size, dataChange              *pqCursor
	modificationTime, deletionTimestamp *pqCursor
	dv                                  *pqDVReader

	// stats and statsRecords are an add's statistics (the stats string and
	// stats_parsed.numRecords), planned only for a read that wants them (kindStats); read is
	// set then, even when the file has neither column.
	stats, statsRecords *pqCursor
	statsWanted         bool
	sd                  statsDecoder
}

type pqDVReader struct {
	def                                                           byte
	storageType, pathOrInlineDv, offset, sizeInBytes, cardinality *pqCursor
}

// Actions are allocated together with their payload: one allocation per row instead of two
// or three, which matters with millions of rows.
type pqAddAlloc struct {
	act Action
	add Add
}

type pqRemoveAlloc struct {
	act    Action
	remove Remove
	ts     int64
	size   int64
}

type pqDVAlloc struct {
	dv     DeletionVector
	offset int32
}

// readRow advances every column of the group by one row and returns the row's action, or nil
// when the row holds another action.
func (r *pqFileReader) readRow() (*Action, error) {
	def, err := r.path.next()
	if err != nil {
		return nil, err
	}
	if def < r.def {
		r.skipRest()
		return nil, nil
	}
	if def < r.path.maxDef {
		// The group is there but its path is null: the action names no file.
		return nil, pqCorruptf("column %s: a %s action has no path", r.path.name, r.kindName())
	}
	path, err := r.path.string()
	if err != nil {
		return nil, err
	}
	var dv *DeletionVector
	if r.dv != nil {
		if dv, err = r.dv.readRow(); err != nil {
			return nil, err
		}
	}
	dataChange, _, err := r.dataChange.bool()
	if err != nil {
		return nil, err
	}
	size, hasSize, err := r.size.int64()
	if err != nil {
		return nil, err
	}
	if r.kind == KindAdd {
		mtime, _, err := r.modificationTime.int64()
		if err != nil {
			return nil, err
		}
		a := &pqAddAlloc{add: Add{
			Path:             path,
			Size:             size,
			ModificationTime: mtime,
			DataChange:       dataChange,
			DeletionVector:   dv,
		}}
		if r.statsWanted {
			n, ok, err := r.numRecords()
			if err != nil {
				return nil, err
			}
			a.add.records, a.add.recordsRead = -1, true
			if ok {
				a.add.records = n
			}
		}
		a.act.Add = &a.add
		return &a.act, nil
	}
	ts, hasTS, err := r.deletionTimestamp.int64()
	if err != nil {
		return nil, err
	}
	a := &pqRemoveAlloc{remove: Remove{
		Path:           path,
		DataChange:     dataChange,
		DeletionVector: dv,
	}, ts: ts, size: size}
	if hasTS {
		a.remove.DeletionTimestamp = &a.ts
	}
	if hasSize {
		a.remove.Size = &a.size
	}
	a.act.Remove = &a.remove
	return &a.act, nil
}

// numRecords reads the row's numRecords: stats_parsed's when the row has it, else the stats
// string's. Statistics that cannot be read say nothing (stats.go); only the columns' levels,
// which keep the reader in step with the rows, can make the file corrupt.
func (r *pqFileReader) numRecords() (int64, bool, error) {
	n, ok, err := r.statsRecords.int64()
	if err != nil {
		return 0, false, err
	}
	if r.stats != nil {
		def, err := r.stats.next()
		if err != nil {
			return 0, false, err
		}
		if !ok && def == r.stats.maxDef {
			n, ok = r.sd.numRecords(r.stats.bytes())
		}
	}
	return n, ok && n >= 0, nil
}

func (r *pqFileReader) kindName() string {
	if r.kind == KindAdd {
		return "add"
	}
	return "remove"
}

// skipRest advances the group's other columns past a row in which the group is null.
func (r *pqFileReader) skipRest() {
	r.size.skip()
	r.dataChange.skip()
	r.modificationTime.skip()
	r.deletionTimestamp.skip()
	r.stats.skip()
	r.statsRecords.skip()
	if r.dv != nil {
		r.dv.skip()
	}
}

func (d *pqDVReader) readRow() (*DeletionVector, error) {
	def, err := d.storageType.next()
	if err != nil {
		return nil, err
	}
	if def < d.def {
		d.pathOrInlineDv.skip()
		d.offset.skip()
		d.sizeInBytes.skip()
		d.cardinality.skip()
		return nil, nil
	}
	a := &pqDVAlloc{}
	if def < d.storageType.maxDef {
		// Without a storage type the vector cannot be located; guessing could let VACUUM
		// delete the file a live add reads its deleted rows from.
		return nil, pqCorruptf("column %s: a deletion vector has no storage type", d.storageType.name)
	}
	if a.dv.StorageType, err = d.storageType.string(); err != nil {
		return nil, err
	}
	if def, err = d.pathOrInlineDv.next(); err != nil {
		return nil, err
	}
	if def == d.pathOrInlineDv.maxDef {
		if a.dv.PathOrInlineDv, err = d.pathOrInlineDv.string(); err != nil {
			return nil, err
		}
	}
	off, hasOff, err := d.offset.int64()
	if err != nil {
		return nil, err
	}
	if hasOff {
		if off < math.MinInt32 || off > math.MaxInt32 {
			return nil, pqCorruptf("column %s: offset %d out of range", d.offset.name, off)
		}
		a.offset = int32(off)
		a.dv.Offset = &a.offset
	}
	size, _, err := d.sizeInBytes.int64()
	if err != nil {
		return nil, err
	}
	if size < math.MinInt32 || size > math.MaxInt32 {
		return nil, pqCorruptf("column %s: size %d out of range", d.sizeInBytes.name, size)
	}
	a.dv.SizeInBytes = int32(size)
	if a.dv.Cardinality, _, err = d.cardinality.int64(); err != nil {
		return nil, err
	}
	return &a.dv, nil
}

func (d *pqDVReader) skip() {
	d.storageType.skip()
	d.pathOrInlineDv.skip()
	d.offset.skip()
	d.sizeInBytes.skip()
	d.cardinality.skip()
}
