package deltalog

import (
	"bytes"
	"io"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/deltavacuum/deltavacuum/internal/strictjson"
)

// The statistics of a data file (PROTOCOL.md, Per-file Statistics) are JSON in an add's stats
// string, or a struct in a checkpoint's stats_parsed column. Only numRecords is read from them,
// and only for an inspection that asks (FilesOptions.NumRecords): it is the physical number of
// rows, so with the cardinality of the file's deletion vector it gives the share of the rows
// marked deleted. No deletion depends on it, so statistics that cannot be read leave the
// number unknown rather than make the log corrupt.

// statsDecoder reads numRecords from stats strings; it is reused from row to row. The zero
// value is ready to use.
type statsDecoder struct {
	dec jsontext.Decoder
	br  bytes.Reader
	sr  strings.Reader
}

// numRecordsOf is numRecords of a stats string (false when it has none, or cannot be read).
func numRecordsOf(stats string) (int64, bool) {
	if stats == "" {
		return 0, false
	}
	var d statsDecoder
	d.sr.Reset(stats)
	return d.read(&d.sr)
}

// numRecords is numRecordsOf of stats held as bytes (a checkpoint page's).
func (d *statsDecoder) numRecords(stats []byte) (int64, bool) {
	if len(stats) == 0 {
		return 0, false
	}
	d.br.Reset(stats)
	return d.read(&d.br)
}

// read reads the top-level members of one JSON object, skipping all but numRecords, which must
// be a whole number, 0 or more. The object is read exactly (strictjson's options: a duplicate
// name or invalid UTF-8 makes it unreadable), as far as numRecords.
func (d *statsDecoder) read(r io.Reader) (int64, bool) {
	d.dec.Reset(r, strictjson.Options)
	if tok, err := d.dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return 0, false
	}
	for d.dec.PeekKind() == '"' {
		name, err := d.dec.ReadToken()
		if err != nil {
			return 0, false
		}
		if name.String() != "numRecords" {
			if err := d.dec.SkipValue(); err != nil {
				return 0, false
			}
			continue
		}
		v, err := d.dec.ReadValue()
		if err != nil || v.Kind() != '0' {
			return 0, false
		}
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil || n < 0 {
			return 0, false
		}
		return n, true
	}
	return 0, false
}
