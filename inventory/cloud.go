package inventory

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/sql"
)

// mappedTable presents a cloud inventory report as an inventory: the four required columns,
// computed from the report's own columns, followed by the report's columns.
type mappedTable struct {
	inner table
	cols  []column
	uses  []int // columns of inner the mapping reads
	// apply computes path, length, isDir and modificationTime from a row of inner; keep is false
	// for rows that are not part of the current listing (old versions, snapshots, deleted blobs,
	// delete markers).
	apply   func(in []sql.Value) (out [numRequired]sql.Value, keep bool, err error)
	skipped int64
}

func newMapped(inner table) *mappedTable {
	m := &mappedTable{inner: inner}
	m.cols = []column{
		{name: "path", typ: "STRING", kind: kindString},
		{name: "length", typ: "BIGINT", kind: kindInt},
		{name: "isDir", typ: "BOOLEAN", kind: kindBool},
		{name: "modificationTime", typ: "BIGINT", kind: kindInt},
	}
	m.cols = append(m.cols, inner.columns()...)
	return m
}

func (m *mappedTable) location() string  { return m.inner.location() }
func (m *mappedTable) columns() []column { return m.cols }

func (m *mappedTable) scan(ctx context.Context, need []bool, fn func(row []sql.Value) error) error {
	innerNeed := make([]bool, len(m.inner.columns()))
	copy(innerNeed, need[numRequired:])
	for _, i := range m.uses {
		innerNeed[i] = true
	}
	out := make([]sql.Value, len(m.cols))
	return m.inner.scan(ctx, innerNeed, func(in []sql.Value) error {
		req, keep, err := m.apply(in)
		if err != nil {
			return err
		}
		if !keep {
			m.skipped++
			return nil
		}
		copy(out, req[:])
		copy(out[numRequired:], in)
		return fn(out)
	})
}

// cloudColumn finds a column of a cloud report by one of its names, ignoring case and the
// characters '-' and '_' (S3 Inventory writes LastModifiedDate in CSV manifests and
// last_modified_date in Parquet).
func cloudColumn(cols []column, names ...string) int {
	norm := func(s string) string {
		return strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(s))
	}
	for _, n := range names {
		if i := lookup(cols, n); i >= 0 {
			return i
		}
	}
	for _, n := range names {
		for i, c := range cols {
			if norm(c.name) == norm(n) {
				return i
			}
		}
	}
	return -1
}

// cellString returns a text or string cell, and false for NULL or an empty string.
func cellString(v sql.Value) (string, bool) {
	if v.Kind() != sql.KindString || v.Str() == "" {
		return "", false
	}
	return v.Str(), true
}

// cellInt reads an integer cell, or a text one holding an integer.
func cellInt(v sql.Value) (int64, bool, error) {
	switch v.Kind() {
	case sql.KindNull:
		return 0, false, nil
	case sql.KindInt:
		return v.Int(), true, nil
	case sql.KindString:
		s := strings.TrimSpace(v.Str())
		if s == "" {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("%q is not an integer", v.Str())
		}
		return n, true, nil
	}
	return 0, false, fmt.Errorf("%v is not an integer", v)
}

// cellBool reads a boolean cell, or a text one holding true or false.
func cellBool(v sql.Value) (b, ok bool, err error) {
	switch v.Kind() {
	case sql.KindNull:
		return false, false, nil
	case sql.KindBool:
		return v.Bool(), true, nil
	case sql.KindString:
		switch strings.ToLower(strings.TrimSpace(v.Str())) {
		case "":
			return false, false, nil
		case "true":
			return true, true, nil
		case "false":
			return false, true, nil
		}
		return false, false, fmt.Errorf("%q is not true or false", v.Str())
	}
	return false, false, fmt.Errorf("%v is not a boolean", v)
}

// cellMillis reads a timestamp cell (milliseconds), or a text one holding an RFC 1123 or
// ISO 8601 date.
func cellMillis(v sql.Value, col column) (int64, bool, error) {
	switch v.Kind() {
	case sql.KindNull:
		return 0, false, nil
	case sql.KindInt:
		if col.kind == kindTimestamp || col.kind == kindInt {
			return v.Int(), true, nil
		}
	case sql.KindString:
		s := strings.TrimSpace(v.Str())
		if s == "" {
			return 0, false, nil
		}
		t, err := parseDate(s)
		if err != nil {
			return 0, false, err
		}
		return t.UnixMilli(), true, nil
	}
	return 0, false, fmt.Errorf("%v is not a date", v)
}

var dateLayouts = []string{
	time.RFC3339Nano, // 2021-05-26T13:25:36.1234567Z; fractions of any length are accepted
	time.RFC1123,     // Wed, 26 May 2021 13:25:36 GMT
	time.RFC1123Z,
	"2006-01-02T15:04:05", // no zone: UTC
	"2006-01-02 15:04:05",
	"2006-01-02 15:04:05Z07:00",
}

func parseDate(s string) (time.Time, error) {
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an RFC 1123 or ISO 8601 date", s)
}

// checkCloudKind reports a column of a cloud report whose type cannot hold what it should.
func checkCloudKind(c column, ok ...kind) string {
	for _, k := range ok {
		if c.kind == k {
			return ""
		}
	}
	return fmt.Sprintf("%s is %s", c.name, c.typ)
}

// newAzure maps an Azure Storage blob inventory report: path is
// <scheme>://<container>@<account host>/<blob>, with the scheme and host of the table root and
// the container and blob from Name ("<container>/<blob>", as blob inventory writes it); length is
// Content-Length, modificationTime is Last-Modified, isDir is hdi_isfolder (or a name ending in
// '/'). Blob snapshots, versions that are not current and deleted blobs are skipped.
func newAzure(inner table, r root) (*mappedTable, error) {
	cols := inner.columns()
	name := cloudColumn(cols, "Name")
	length := cloudColumn(cols, "Content-Length")
	lastMod := cloudColumn(cols, "Last-Modified")
	folder := cloudColumn(cols, "hdi_isfolder")
	snapshot := cloudColumn(cols, "Snapshot")
	current := cloudColumn(cols, "IsCurrentVersion")
	deleted := cloudColumn(cols, "Deleted")
	var problems []string
	for _, c := range []struct {
		i    int
		name string
	}{{name, "Name"}, {length, "Content-Length"}, {lastMod, "Last-Modified"}} {
		if c.i < 0 {
			problems = append(problems, "the Azure blob inventory has no "+c.name+" field: the inventory rule's schemaFields must include Name, Content-Length and Last-Modified (and hdi_isfolder on accounts with a hierarchical namespace)")
		}
	}
	if problems == nil {
		for _, p := range []string{
			checkCloudKind(cols[name], kindString, kindText),
			checkCloudKind(cols[length], kindInt, kindString, kindText),
			checkCloudKind(cols[lastMod], kindTimestamp, kindInt, kindString, kindText),
		} {
			if p != "" {
				problems = append(problems, p)
			}
		}
	}
	if problems != nil {
		return nil, &SchemaError{Location: inner.location(), Found: fields(cols), Problems: problems}
	}
	if !r.isAzure() {
		return nil, fmt.Errorf("inventory %s is an Azure blob inventory, but the table %s is not on Azure storage (abfss://container@account.dfs.core.windows.net/...)", inner.location(), r.uri)
	}
	m := newMapped(inner)
	m.uses = []int{name, length, lastMod}
	for _, i := range []int{folder, snapshot, current, deleted} {
		if i >= 0 {
			m.uses = append(m.uses, i)
		}
	}
	prefix := r.scheme + "://"
	suffix := "@" + r.host + "/"
	m.apply = func(in []sql.Value) (out [numRequired]sql.Value, keep bool, err error) {
		if snapshot >= 0 {
			if _, ok := cellString(in[snapshot]); ok {
				return out, false, nil
			}
		}
		if current >= 0 {
			if b, ok, err := cellBool(in[current]); err != nil {
				return out, false, fmt.Errorf("IsCurrentVersion: %w", err)
			} else if ok && !b {
				return out, false, nil
			}
		}
		if deleted >= 0 {
			if b, ok, err := cellBool(in[deleted]); err != nil {
				return out, false, fmt.Errorf("Deleted: %w", err) //nolint:staticcheck // starts with the column's name
			} else if ok && b {
				return out, false, nil
			}
		}
		n, ok := cellString(in[name])
		if !ok {
			return out, true, nil // path NULL: ignored
		}
		container, blob, found := strings.Cut(n, "/")
		if !found || container == "" {
			return out, true, nil
		}
		out[colPath] = sql.StringValue(prefix + container + suffix + blob)
		isDir := strings.HasSuffix(blob, "/")
		if folder >= 0 {
			b, _, err := cellBool(in[folder])
			if err != nil {
				return out, false, fmt.Errorf("hdi_isfolder: %w", err)
			}
			isDir = isDir || b
		}
		out[colIsDir] = sql.BoolValue(isDir)
		size, ok, err := cellInt(in[length])
		if err != nil {
			return out, false, fmt.Errorf("Content-Length: %w", err)
		}
		if ok {
			out[colLength] = sql.IntValue(size)
		}
		ms, ok, err := cellMillis(in[lastMod], cols[lastMod])
		if err != nil {
			return out, false, fmt.Errorf("Last-Modified: %w", err)
		}
		if ok {
			out[colModTime] = sql.IntValue(ms)
		}
		return out, true, nil
	}
	return m, nil
}

// newS3 maps an Amazon S3 Inventory report: path is s3://<bucket>/<key>, length is Size,
// modificationTime is LastModifiedDate, isDir is a key ending in '/'. Keys of CSV reports are
// URL-encoded (a space as '+') and are decoded. Versions that are not the latest and delete
// markers are skipped.
func newS3(inner table, sourceBucket string, urlEncoded bool, r root) (*mappedTable, error) {
	cols := inner.columns()
	bucket := cloudColumn(cols, "Bucket")
	key := cloudColumn(cols, "Key")
	size := cloudColumn(cols, "Size")
	lastMod := cloudColumn(cols, "LastModifiedDate", "last_modified_date")
	latest := cloudColumn(cols, "IsLatest", "is_latest")
	marker := cloudColumn(cols, "IsDeleteMarker", "is_delete_marker")
	var problems []string
	if key < 0 {
		problems = append(problems, "the S3 inventory has no Key field")
	}
	if bucket < 0 && sourceBucket == "" {
		problems = append(problems, "the S3 inventory has no Bucket field and its manifest no sourceBucket")
	}
	if size < 0 || lastMod < 0 {
		problems = append(problems, "the S3 inventory lacks the Size or LastModifiedDate field: add both optional fields to the inventory configuration")
	}
	if problems == nil {
		for _, p := range []string{
			checkCloudKind(cols[key], kindString, kindText),
			checkCloudKind(cols[size], kindInt, kindString, kindText),
			checkCloudKind(cols[lastMod], kindTimestamp, kindInt, kindString, kindText),
		} {
			if p != "" {
				problems = append(problems, p)
			}
		}
	}
	if problems != nil {
		return nil, &SchemaError{Location: inner.location(), Found: fields(cols), Problems: problems}
	}
	if !r.isS3() {
		return nil, fmt.Errorf("inventory %s is an Amazon S3 inventory, but the table %s is not on S3 (s3://bucket/...)", inner.location(), r.uri)
	}
	m := newMapped(inner)
	m.uses = []int{key, size, lastMod}
	for _, i := range []int{bucket, latest, marker} {
		if i >= 0 {
			m.uses = append(m.uses, i)
		}
	}
	m.apply = func(in []sql.Value) (out [numRequired]sql.Value, keep bool, err error) {
		if latest >= 0 {
			if b, ok, err := cellBool(in[latest]); err != nil {
				return out, false, fmt.Errorf("IsLatest: %w", err)
			} else if ok && !b {
				return out, false, nil
			}
		}
		if marker >= 0 {
			if b, ok, err := cellBool(in[marker]); err != nil {
				return out, false, fmt.Errorf("IsDeleteMarker: %w", err)
			} else if ok && b {
				return out, false, nil
			}
		}
		b := sourceBucket
		if bucket >= 0 {
			if v, ok := cellString(in[bucket]); ok {
				b = v
			}
		}
		k, ok := cellString(in[key])
		if !ok || b == "" {
			return out, true, nil // path NULL: ignored
		}
		if urlEncoded {
			if k, err = url.QueryUnescape(k); err != nil {
				return out, false, fmt.Errorf("Key %q is not URL-encoded: %v", in[key].Str(), err) //nolint:staticcheck // starts with the column's name
			}
		}
		out[colPath] = sql.StringValue("s3://" + b + "/" + k)
		out[colIsDir] = sql.BoolValue(strings.HasSuffix(k, "/"))
		n, ok, err := cellInt(in[size])
		if err != nil {
			return out, false, fmt.Errorf("Size: %w", err) //nolint:staticcheck // starts with the column's name
		}
		if ok {
			out[colLength] = sql.IntValue(n)
		}
		ms, ok, err := cellMillis(in[lastMod], cols[lastMod])
		if err != nil {
			return out, false, fmt.Errorf("LastModifiedDate: %w", err)
		}
		if ok {
			out[colModTime] = sql.IntValue(ms)
		}
		return out, true, nil
	}
	return m, nil
}

// looksAzure reports whether cols are those of an Azure blob inventory report rather than of an
// inventory with the required columns.
func looksAzure(cols []column) bool {
	if lookup(cols, "path") != -1 || lookup(cols, "Name") < 0 {
		return false
	}
	for _, n := range []string{"Content-Length", "Last-Modified", "Creation-Time", "hdi_isfolder", "BlobType", "AccessTier"} {
		if lookup(cols, n) >= 0 {
			return true
		}
	}
	return false
}

// s3Manifest is the manifest.json of an Amazon S3 Inventory report.
type s3Manifest struct {
	SourceBucket      string `json:"sourceBucket"`
	DestinationBucket string `json:"destinationBucket"`
	FileFormat        string `json:"fileFormat"`
	FileSchema        string `json:"fileSchema"`
	Files             []struct {
		Key string `json:"key"`
	} `json:"files"`
}

// azureManifest is the <rule>-manifest.json of an Azure Storage blob inventory run.
type azureManifest struct {
	DestinationContainer string `json:"destinationContainer"`
	Endpoint             string `json:"endpoint"`
	Files                []struct {
		Blob string `json:"blob"`
	} `json:"files"`
	RuleDefinition struct {
		Format     string `json:"format"`
		ObjectType string `json:"objectType"`
	} `json:"ruleDefinition"`
	Status string `json:"status"`
}
