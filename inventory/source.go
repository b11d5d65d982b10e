package inventory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

// OpenLocal opens a local directory, given as a path or a file:// URI, as a store. It is the
// default of Options.Open; it refuses other schemes.
func OpenLocal(ctx context.Context, location string) (storage.Store, error) {
	p := location
	if deltalog.HasScheme(location) {
		u, err := url.Parse(location)
		if err != nil {
			return nil, fmt.Errorf("inventory location %q: %w", location, err)
		}
		if !strings.EqualFold(u.Scheme, "file") {
			return nil, fmt.Errorf("inventory location %q: the %s: scheme is not supported without a store opener (Options.Open); give a local path or a file:// URI", location, u.Scheme)
		}
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("inventory location %q: file URIs must name a local path (file:///path)", location)
		}
		p = u.Path
		if u.Opaque != "" {
			p = u.Opaque
		}
	}
	return local.New(filepath.FromSlash(p))
}

// opener opens the stores that hold inventories and finds what a location holds.
type opener struct {
	open   func(ctx context.Context, location string) (storage.Store, error)
	stores map[string]storage.Store
}

// store returns the store of l's file system, bucket or container (its root, not l itself).
func (o *opener) store(ctx context.Context, l location) (storage.Store, error) {
	base := l.base()
	if s, ok := o.stores[base]; ok {
		return s, nil
	}
	s, err := o.open(ctx, base)
	if err != nil {
		return nil, fmt.Errorf("inventory %s: opening %s: %w", l, base, err)
	}
	o.stores[base] = s
	return s, nil
}

// stat reports whether key is a directory (a prefix with entries below it) or a file.
func stat(ctx context.Context, st storage.Store, key string) (isDir bool, err error) {
	if key == "" {
		return true, nil
	}
	obj, err := st.Stat(ctx, key)
	if err == nil {
		return obj.IsDir, nil
	}
	if !errors.Is(err, storage.ErrNotExist) {
		return false, err
	}
	// Object stores have directories only as prefixes of keys.
	found := false
	werr := st.Walk(ctx, key+"/", func(storage.Object) error {
		found = true
		return errStop
	})
	if found {
		return true, nil
	}
	if werr != nil && !errors.Is(werr, storage.ErrNotExist) && !errors.Is(werr, errStop) {
		return false, werr
	}
	return false, err
}

// dataFiles lists the files below dir that are not hidden (no component below dir starts with
// '_' or '.', as Spark's file sources skip _SUCCESS, _delta_log and .crc files).
func dataFiles(ctx context.Context, st storage.Store, dir string) ([]string, error) {
	var keys []string
	err := st.Walk(ctx, dirKey(dir), func(o storage.Object) error {
		name := o.Name()
		if strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") {
			if o.IsDir {
				return storage.SkipDir
			}
			return nil
		}
		if !o.IsDir {
			keys = append(keys, o.Key)
		}
		return nil
	})
	return keys, err
}

func withSuffix(keys []string, suffixes ...string) []string {
	var out []string
	for _, k := range keys {
		lk := strings.ToLower(k)
		for _, s := range suffixes {
			if strings.HasSuffix(lk, s) {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

var (
	parquetSuffixes = []string{".parquet"}
	csvSuffixes     = []string{".csv", ".csv.gz", ".csv.gzip"}
)

func isManifest(key string) bool {
	name := path.Base(key)
	return name == "manifest.json" || strings.HasSuffix(name, "-manifest.json")
}

// table opens what l holds as format f.
func (o *opener) table(ctx context.Context, l location, f Format, r root) (table, error) {
	st, err := o.store(ctx, l)
	if err != nil {
		return nil, err
	}
	isDir, err := stat(ctx, st, l.key)
	if err != nil {
		if errors.Is(err, storage.ErrNotExist) {
			return nil, fmt.Errorf("inventory %s does not exist: %w", l, err)
		}
		return nil, fmt.Errorf("inventory %s: %w", l, err)
	}
	detect := f == FormatAuto
	isDelta := false
	if isDir {
		isDelta, err = stat(ctx, st, path.Join(l.key, "_delta_log"))
		if err != nil && !errors.Is(err, storage.ErrNotExist) {
			return nil, fmt.Errorf("inventory %s: %w", l, err)
		}
	}
	switch {
	case isDelta && (f == FormatAuto || f == FormatDelta):
		ts, err := o.open(ctx, l.uri(l.key))
		if err != nil {
			return nil, fmt.Errorf("inventory %s: %w", l, err)
		}
		return openDelta(ctx, l.String(), ts)
	case isDelta:
		// Its files include those of removed rows: only the log says which are live.
		return nil, fmt.Errorf("inventory %s is a Delta table: read it as delta.`%s`, not as %s", l, l, f)
	case f == FormatDelta:
		return nil, fmt.Errorf("inventory %s is not a Delta table: it has no _delta_log directory", l)
	}
	var keys []string
	if isDir {
		all, err := dataFiles(ctx, st, l.key)
		if err != nil {
			return nil, fmt.Errorf("inventory %s: %w", l, err)
		}
		if f == FormatAuto || f == FormatS3 || f == FormatAzure {
			var manifests []string
			for _, k := range all {
				if isManifest(k) && storage.Dir(k) == dirKey(l.key) {
					manifests = append(manifests, k)
				}
			}
			switch {
			case len(manifests) == 1:
				return o.manifest(ctx, st, l.at(manifests[0]), f, r)
			case len(manifests) > 1:
				return nil, fmt.Errorf("inventory %s holds several manifests (%s): give the one to use", l, strings.Join(manifests, ", "))
			case f == FormatS3:
				return nil, fmt.Errorf("inventory %s has no manifest.json: give the manifest of the S3 Inventory report", l)
			}
		}
		switch f {
		case FormatParquet:
			if keys = withSuffix(all, parquetSuffixes...); keys == nil {
				keys = all
			}
		case FormatCSV:
			if keys = withSuffix(all, csvSuffixes...); keys == nil {
				keys = all
			}
		default: // auto, azure
			pq, csv := withSuffix(all, parquetSuffixes...), withSuffix(all, csvSuffixes...)
			switch {
			case pq != nil && csv != nil:
				return nil, fmt.Errorf("inventory %s holds both Parquet and CSV files: give one file, or a directory of one format", l)
			case pq != nil:
				keys, f = pq, pick(f, FormatParquet)
			case csv != nil:
				keys, f = csv, pick(f, FormatCSV)
			default:
				return nil, fmt.Errorf("inventory %s holds no Delta table, manifest, Parquet or CSV file", l)
			}
		}
		if keys == nil {
			return nil, fmt.Errorf("inventory %s holds no files", l)
		}
	} else {
		keys = []string{l.key}
		if f == FormatAuto || f == FormatS3 || f == FormatAzure {
			if isManifest(l.key) || strings.HasSuffix(strings.ToLower(l.key), ".json") {
				return o.manifest(ctx, st, l, f, r)
			}
			if f == FormatS3 {
				return nil, fmt.Errorf("inventory %s is not an S3 Inventory manifest: give the report's manifest.json", l)
			}
		}
		if f == FormatAuto || f == FormatAzure {
			switch {
			case len(withSuffix(keys, csvSuffixes...)) > 0:
				f = pick(f, FormatCSV)
			case len(withSuffix(keys, parquetSuffixes...)) > 0:
				f = pick(f, FormatParquet)
			default:
				obj, err := st.Open(ctx, l.key)
				if err != nil {
					return nil, fmt.Errorf("inventory %s: %w", l, err)
				}
				var magic [4]byte
				n, _ := obj.ReadAt(magic[:], 0)
				obj.Close()
				if n == 4 && string(magic[:]) == "PAR1" {
					f = pick(f, FormatParquet)
				} else {
					return nil, fmt.Errorf("inventory %s: cannot tell its format from its name: give it as parquet.`%s` or csv.`%s`", l, l, l)
				}
			}
		}
	}
	return o.files(ctx, st, l, keys, f, detect, r)
}

// pick keeps azure (whose files may be CSV or Parquet) and otherwise takes what was found.
func pick(f, found Format) Format {
	if f == FormatAzure {
		return f
	}
	return found
}

// files opens data files of one kind: f is parquet or csv (read as an Azure report when detect is
// set and their columns look like one), or azure.
func (o *opener) files(ctx context.Context, st storage.Store, l location, keys []string, f Format, detect bool, r root) (table, error) {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = l.at(k).String()
	}
	var t table
	var err error
	switch {
	case f == FormatCSV || f == FormatAzure && len(withSuffix(keys[:1], csvSuffixes...)) > 0:
		t, err = newCSVTable(ctx, l.String(), st, keys, names, nil)
	default:
		t, err = newParquetTable(ctx, l.String(), st, keys, names)
	}
	if err != nil {
		return nil, err
	}
	if f == FormatAzure || detect && looksAzure(t.columns()) {
		return newAzure(t, r)
	}
	return t, nil
}

// manifest opens the report an S3 Inventory manifest.json or an Azure blob inventory
// <rule>-manifest.json lists.
func (o *opener) manifest(ctx context.Context, st storage.Store, l location, f Format, r root) (table, error) {
	data, err := storage.ReadAll(ctx, st, l.key)
	if err != nil {
		return nil, fmt.Errorf("inventory %s: %w", l, err)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("inventory %s is not a JSON manifest: %v", l, err)
	}
	_, s3 := probe["sourceBucket"]
	_, az := probe["destinationContainer"]
	if !s3 && !az {
		_, s3 = probe["fileSchema"]
		_, az = probe["ruleDefinition"]
	}
	switch {
	case s3 && f != FormatAzure:
		return o.s3Manifest(ctx, st, l, data, r)
	case az && f != FormatS3:
		return o.azureManifest(ctx, st, l, data, r)
	}
	return nil, fmt.Errorf("inventory %s is neither an Amazon S3 Inventory manifest nor an Azure blob inventory manifest", l)
}

func (o *opener) s3Manifest(ctx context.Context, st storage.Store, l location, data []byte, r root) (table, error) {
	var m s3Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("inventory %s: S3 Inventory manifest: %v", l, err)
	}
	if len(m.Files) == 0 {
		return nil, fmt.Errorf("inventory %s: the S3 Inventory manifest lists no files", l)
	}
	rel := make([]string, len(m.Files))
	for i, file := range m.Files {
		rel[i] = file.Key
	}
	keys, err := manifestFiles(ctx, st, l, rel)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = l.at(k).String()
	}
	var t table
	switch strings.ToUpper(m.FileFormat) {
	case "CSV":
		var header []string
		for _, h := range strings.Split(m.FileSchema, ",") {
			header = append(header, strings.TrimSpace(h))
		}
		if m.FileSchema == "" {
			return nil, fmt.Errorf("inventory %s: the S3 Inventory manifest has no fileSchema naming the CSV columns", l)
		}
		t, err = newCSVTable(ctx, l.String(), st, keys, names, header)
	case "PARQUET":
		t, err = newParquetTable(ctx, l.String(), st, keys, names)
	default:
		return nil, fmt.Errorf("inventory %s: S3 Inventory reports in %q format are not supported (CSV and Parquet are)", l, m.FileFormat)
	}
	if err != nil {
		return nil, err
	}
	return newS3(t, m.SourceBucket, strings.EqualFold(m.FileFormat, "CSV"), r)
}

func (o *opener) azureManifest(ctx context.Context, st storage.Store, l location, data []byte, r root) (table, error) {
	var m azureManifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("inventory %s: Azure blob inventory manifest: %v", l, err)
	}
	if m.Status != "" && !strings.EqualFold(m.Status, "Succeeded") {
		return nil, fmt.Errorf("inventory %s: the Azure blob inventory run did not succeed (status %s): its report may be incomplete", l, m.Status)
	}
	if ot := m.RuleDefinition.ObjectType; ot != "" && !strings.EqualFold(ot, "blob") {
		return nil, fmt.Errorf("inventory %s: the Azure inventory lists %ss, not blobs", l, ot)
	}
	if err := sameAzureAccount(m.Endpoint, r); err != nil {
		return nil, fmt.Errorf("inventory %s: %v", l, err)
	}
	if len(m.Files) == 0 {
		return nil, fmt.Errorf("inventory %s: the Azure blob inventory manifest lists no files", l)
	}
	rel := make([]string, len(m.Files))
	for i, file := range m.Files {
		rel[i] = file.Blob
	}
	keys, err := manifestFiles(ctx, st, l, rel)
	if err != nil {
		return nil, err
	}
	format := FormatParquet
	switch {
	case strings.EqualFold(m.RuleDefinition.Format, "csv"):
		format = FormatCSV
	case m.RuleDefinition.Format == "" && withSuffix(keys[:1], csvSuffixes...) != nil:
		format = FormatCSV
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = l.at(k).String()
	}
	var t table
	if format == FormatCSV {
		t, err = newCSVTable(ctx, l.String(), st, keys, names, nil)
	} else {
		t, err = newParquetTable(ctx, l.String(), st, keys, names)
	}
	if err != nil {
		return nil, err
	}
	return newAzure(t, r)
}

// sameAzureAccount checks that an Azure blob inventory manifest's endpoint (the account the
// report is of; its rows name only "CONTAINER/BLOB") is the table root's account, its Blob and
// DFS hosts alike. The report of another account (a staging account, a replica) would
// otherwise be read as this table's listing. A manifest without an endpoint is taken as the
// root's (older reports); one whose endpoint cannot be read is refused.
func sameAzureAccount(endpoint string, r root) error {
	if endpoint == "" || !r.isAzure() {
		return nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return fmt.Errorf("the Azure blob inventory manifest's endpoint %q is not a URL: cannot tell which account the report is of", endpoint)
	}
	if deltalog.NormalizeAuthority(r.scheme, "", u.Hostname(), false) != deltalog.NormalizeAuthority(r.scheme, "", hostname(r.host), false) {
		return fmt.Errorf("the report is of the storage account at %s, not of the table's (%s): use the inventory of the table's own account", u.Hostname(), hostname(r.host))
	}
	return nil
}

// hostname is host without its port.
func hostname(host string) string { return (&url.URL{Host: host}).Hostname() }

// manifestFiles finds the files a manifest lists. Their keys are relative to the bucket or
// container the report was written to, which is an ancestor of the manifest: the closest ancestor
// below which the first file exists is taken for all of them.
func manifestFiles(ctx context.Context, st storage.Store, l location, rel []string) ([]string, error) {
	first := strings.TrimPrefix(rel[0], "/")
	var tried []string
	for dir := path.Dir(l.key); ; dir = path.Dir(dir) {
		if dir == "." || dir == "/" {
			dir = ""
		}
		key := path.Join(dir, first)
		if _, err := st.Stat(ctx, key); err == nil {
			keys := make([]string, len(rel))
			for i, k := range rel {
				keys[i] = path.Join(dir, strings.TrimPrefix(k, "/"))
			}
			return keys, nil
		} else if !errors.Is(err, storage.ErrNotExist) {
			return nil, fmt.Errorf("inventory %s: %w", l, err)
		}
		tried = append(tried, l.at(key).String())
		if dir == "" {
			break
		}
	}
	return nil, fmt.Errorf("inventory %s: the file %s it lists was not found (looked for %s)", l, first, strings.Join(tried, ", "))
}
