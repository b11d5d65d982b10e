package inventory

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

const azureRoot = "abfss://c@acct.dfs.core.windows.net/t"

// ms returns the milliseconds of an RFC 3339 time.
func ms(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UnixMilli()
}

var azureCSV = "Name,Creation-Time,Last-Modified,Content-Length,Content-MD5,BlobType,AccessTier,hdi_isfolder\n" +
	`c/t/part-0.parquet,"Wed, 26 May 2021 13:20:00 GMT","Wed, 26 May 2021 13:25:36 GMT",100,x,BlockBlob,Hot,false` + "\n" +
	`c/t/p=1,2021-05-26T13:25:36.1234567Z,2021-05-26T13:25:36.1234567Z,,,BlockBlob,Hot,true` + "\n" +
	`c/t/p=1/a b%3A.parquet,2021-05-26T13:25:36Z,2021-05-26T14:00:00.5Z,7,,BlockBlob,Cool,` + "\n" +
	`c/t/_delta_log/,2021-05-26T13:25:36Z,2021-05-26T14:00:00Z,0,,BlockBlob,Hot,false` + "\n" +
	`c/other/x,2021-05-26T13:25:36Z,2021-05-26T14:00:00Z,1,,BlockBlob,Hot,false` + "\n" +
	`d/t/x,2021-05-26T13:25:36Z,2021-05-26T14:00:00Z,1,,BlockBlob,Hot,false` + "\n"

var azureListing = []string{
	fmt.Sprintf("_delta_log/ 0 %d", ms("2021-05-26T14:00:00Z")),
	fmt.Sprintf("p=1/ 0 %d", ms("2021-05-26T13:25:36.123Z")),
	fmt.Sprintf("p=1/a b%%3A.parquet 7 %d", ms("2021-05-26T14:00:00.5Z")),
	fmt.Sprintf("part-0.parquet 100 %d", ms("2021-05-26T13:25:36Z")),
}

func TestAzureCSV(t *testing.T) {
	inv := filepath.Join(t.TempDir(), "Rule_1_1.csv")
	writeFile(t, inv, []byte(azureCSV))
	for _, f := range []Format{FormatAuto, FormatAzure} {
		for _, root := range []string{azureRoot, "abfs://c@ACCT.blob.core.windows.net/t/"} {
			l := open(t, Source{Location: inv, Format: f}, root)
			diff(t, walk(t, l, ""), azureListing)
			if l.Ignored() != 2 {
				t.Errorf("ignored %d, want 2", l.Ignored())
			}
		}
	}
	// Read as a plain CSV file, it lacks the required columns.
	_, err := Open(context.Background(), Source{Location: inv, Format: FormatCSV}, azureRoot, Options{})
	wantSchemaError(t, err, "")
	// A query sees the mapped columns and the report's own.
	l := open(t, Source{Location: inv, Query: query(t, "SELECT * FROM inventory WHERE AccessTier = 'Hot' AND path LIKE 'abfss://c@acct.dfs.core.windows.net/t/%' AND `Content-Length` IS NOT NULL")}, azureRoot)
	diff(t, walk(t, l, ""), []string{azureListing[0], azureListing[3]})
}

func TestAzureParquetAndManifest(t *testing.T) {
	type azureRow struct {
		Name             string    `parquet:"Name"`
		CreationTime     time.Time `parquet:"Creation-Time,timestamp(millisecond)"`
		LastModified     time.Time `parquet:"Last-Modified,timestamp(millisecond)"`
		ContentLength    int64     `parquet:"Content-Length"`
		HdiIsFolder      string    `parquet:"hdi_isfolder,optional"`
		Snapshot         *string   `parquet:"Snapshot,optional"`
		IsCurrentVersion *bool     `parquet:"IsCurrentVersion,optional"`
		Deleted          *bool     `parquet:"Deleted,optional"`
	}
	at := func(s string) time.Time { return time.UnixMilli(ms(s)) }
	snap, no, yes := "2021-05-26T13:00:00Z", false, true
	rows := []azureRow{
		{Name: "c/t/part-0.parquet", LastModified: at("2021-05-26T13:25:36Z"), ContentLength: 100},
		{Name: "c/t/p=1", LastModified: at("2021-05-26T13:25:36.123Z"), HdiIsFolder: "true"},
		{Name: "c/t/p=1/a b%3A.parquet", LastModified: at("2021-05-26T14:00:00.5Z"), ContentLength: 7},
		{Name: "c/t/_delta_log/", LastModified: at("2021-05-26T14:00:00Z")},
		{Name: "c/other/x", LastModified: at("2021-05-26T14:00:00Z")},
		{Name: "d/t/x", LastModified: at("2021-05-26T14:00:00Z")},
		// Not part of the current listing.
		{Name: "c/t/snapshot", LastModified: at("2021-05-26T14:00:00Z"), Snapshot: &snap},
		{Name: "c/t/old-version", LastModified: at("2021-05-26T14:00:00Z"), IsCurrentVersion: &no},
		{Name: "c/t/deleted", LastModified: at("2021-05-26T14:00:00Z"), Deleted: &yes},
	}
	base := t.TempDir()
	ruleDir := filepath.Join(base, "inventory-container", "2021", "05", "26", "13-25-36", "Rule_1")
	writeParquet(t, filepath.Join(ruleDir, "Rule_1_1.parquet"), rows[:4])
	writeParquet(t, filepath.Join(ruleDir, "Rule_1_2.parquet"), rows[4:])
	manifest := `{
  "destinationContainer" : "inventory-container",
  "endpoint" : "https://acct.blob.core.windows.net",
  "files" : [
    {"blob" : "2021/05/26/13-25-36/Rule_1/Rule_1_1.parquet", "size" : 1},
    {"blob" : "2021/05/26/13-25-36/Rule_1/Rule_1_2.parquet", "size" : 1}
  ],
  "inventoryCompletionTime" : "2021-05-26T13:35:56Z",
  "inventoryStartTime" : "2021-05-26T13:25:36Z",
  "ruleDefinition" : {"filters" : {"blobTypes" : ["blockBlob"]}, "format" : "parquet", "objectType" : "blob", "schedule" : "daily",
    "schemaFields" : ["Name", "Creation-Time", "Last-Modified", "Content-Length", "hdi_isfolder", "Snapshot", "IsCurrentVersion", "Deleted"]},
  "ruleName" : "Rule_1",
  "status" : "Succeeded",
  "summary" : {"objectCount" : 9, "totalObjectSize" : 107},
  "version" : "1.0"
}`
	writeFile(t, filepath.Join(ruleDir, "Rule_1-manifest.json"), []byte(manifest))
	writeFile(t, filepath.Join(ruleDir, "Rule_1-manifest.checksum"), []byte("x"))
	for _, src := range []Source{
		{Location: filepath.Join(ruleDir, "Rule_1-manifest.json")},
		{Location: filepath.Join(ruleDir, "Rule_1-manifest.json"), Format: FormatAzure},
		{Location: ruleDir},
		{Location: ruleDir, Format: FormatAzure},
	} {
		l := open(t, src, azureRoot)
		diff(t, walk(t, l, ""), azureListing)
		if l.Ignored() != 2 || l.Skipped() != 3 || l.Rows() != 6 {
			t.Errorf("%+v: ignored %d, skipped %d, rows %d; want 2, 3, 6", src, l.Ignored(), l.Skipped(), l.Rows())
		}
	}
	// One Parquet report file, found by its columns.
	l := open(t, Source{Location: filepath.Join(ruleDir, "Rule_1_1.parquet")}, azureRoot)
	diff(t, walk(t, l, ""), azureListing)

	failed := strings.Replace(manifest, `"Succeeded"`, `"PartiallySucceeded"`, 1)
	writeFile(t, filepath.Join(ruleDir, "Rule_1-manifest.json"), []byte(failed))
	_, err := Open(context.Background(), Source{Location: ruleDir}, azureRoot, Options{})
	if err == nil || !strings.Contains(err.Error(), "did not succeed (status PartiallySucceeded)") {
		t.Errorf("got %v, want a refusal of an incomplete run", err)
	}
}

func TestAzureErrors(t *testing.T) {
	inv := filepath.Join(t.TempDir(), "report.csv")
	writeFile(t, inv, []byte(azureCSV))
	_, err := Open(context.Background(), Source{Location: inv}, "s3://bucket/t", Options{})
	if err == nil || !strings.Contains(err.Error(), "is an Azure blob inventory, but the table s3://bucket/t is not on Azure storage") {
		t.Errorf("got %v", err)
	}
	noLength := filepath.Join(t.TempDir(), "report.csv")
	writeFile(t, noLength, []byte("Name,Last-Modified,BlobType\nc/t/x,2021-05-26T14:00:00Z,BlockBlob\n"))
	_, err = Open(context.Background(), Source{Location: noLength, Format: FormatAzure}, azureRoot, Options{})
	wantSchemaError(t, err, schemaMsg+" Found in "+noLength+": Name STRING, Last-Modified STRING, BlobType STRING (the Azure blob inventory has no Content-Length field: the inventory rule's schemaFields must include Name, Content-Length and Last-Modified (and hdi_isfolder on accounts with a hierarchical namespace))")
	badDate := filepath.Join(t.TempDir(), "report.csv")
	writeFile(t, badDate, []byte("Name,Last-Modified,Content-Length\nc/t/x,yesterday,1\n"))
	_, err = Open(context.Background(), Source{Location: badDate}, azureRoot, Options{})
	if want := "inventory " + badDate + " line 2: Last-Modified: \"yesterday\" is not an RFC 1123 or ISO 8601 date"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// s3Bucket writes an S3 Inventory report as a destination bucket holds it and returns the
// manifest's directory.
func s3Bucket(t *testing.T, bucket, format, schema string, files map[string][]byte) string {
	t.Helper()
	dir := filepath.Join(bucket, "inventories", "src-bucket", "config-1", "2016-11-06T21-32Z")
	var list []string
	for name, data := range files {
		key := "inventories/src-bucket/config-1/data/" + name
		writeFile(t, filepath.Join(bucket, filepath.FromSlash(key)), data)
		list = append(list, fmt.Sprintf(`{"key": %q, "size": %d, "MD5checksum": "x"}`, key, len(data)))
	}
	manifest := fmt.Sprintf(`{
  "sourceBucket" : "src-bucket",
  "destinationBucket" : "arn:aws:s3:::dest-bucket",
  "version" : "2016-11-30",
  "creationTimestamp" : "1478468280000",
  "fileFormat" : %q,
  "fileSchema" : %q,
  "files" : [%s]
}`, format, schema, strings.Join(list, ","))
	writeFile(t, filepath.Join(dir, "manifest.json"), []byte(manifest))
	writeFile(t, filepath.Join(dir, "manifest.checksum"), []byte("x"))
	return dir
}

func TestS3CSV(t *testing.T) {
	csv := strings.Join([]string{
		`"src-bucket","t/part-0.parquet","v1","true","false","10","2016-11-06T21:32:46.000Z"`,
		`"src-bucket","t/a+b/x%3Dy%25z%2B.parquet","","true","false","20","2016-11-06T21:32:47.123Z"`,
		`"src-bucket","t/p%3D1/","","true","false","0","2016-11-06T21:32:48.000Z"`,
		`"src-bucket","t/old","v0","false","false","5","2016-11-06T21:32:48.000Z"`,
		`"src-bucket","t/gone","v2","true","true","","2016-11-06T21:32:48.000Z"`,
		`"src-bucket","other/x","","true","false","1","2016-11-06T21:32:48.000Z"`,
	}, "\n") + "\n"
	bucket := t.TempDir()
	dir := s3Bucket(t, bucket, "CSV", "Bucket, Key, VersionId, IsLatest, IsDeleteMarker, Size, LastModifiedDate",
		map[string][]byte{"a.csv.gz": gzipped(t, csv)})
	want := []string{
		"a b/ 0 -",
		fmt.Sprintf("a b/x=y%%z+.parquet 20 %d", ms("2016-11-06T21:32:47.123Z")),
		fmt.Sprintf("p=1/ 0 %d", ms("2016-11-06T21:32:48Z")),
		fmt.Sprintf("part-0.parquet 10 %d", ms("2016-11-06T21:32:46Z")),
	}
	for _, src := range []Source{
		{Location: filepath.Join(dir, "manifest.json")},
		{Location: dir},
		{Location: dir, Format: FormatS3},
		{Query: query(t, "SELECT * FROM '"+filepath.Join(dir, "manifest.json")+"' WHERE VersionId IS NULL OR VersionId = 'v1'")},
	} {
		for _, root := range []string{"s3://src-bucket/t", "s3a://src-bucket/t/"} {
			l := open(t, src, root)
			diff(t, walk(t, l, ""), want)
			if src.Query == nil && (l.Ignored() != 1 || l.Skipped() != 2) {
				t.Errorf("ignored %d, skipped %d; want 1, 2", l.Ignored(), l.Skipped())
			}
		}
	}

	_, err := Open(context.Background(), Source{Location: dir}, azureRoot, Options{})
	if err == nil || !strings.Contains(err.Error(), "is an Amazon S3 inventory, but the table "+azureRoot+" is not on S3") {
		t.Errorf("got %v", err)
	}
	noSize := s3Bucket(t, t.TempDir(), "CSV", "Bucket, Key", map[string][]byte{"a.csv.gz": gzipped(t, `"src-bucket","t/x"`+"\n")})
	_, err = Open(context.Background(), Source{Location: noSize}, "s3://src-bucket/t", Options{})
	wantSchemaError(t, err, schemaMsg+" Found in "+filepath.Join(noSize, "manifest.json")+": Bucket STRING, Key STRING (the S3 inventory lacks the Size or LastModifiedDate field: add both optional fields to the inventory configuration)")
	orc := s3Bucket(t, t.TempDir(), "ORC", "struct<bucket:string>", map[string][]byte{"a.orc": []byte("ORC")})
	_, err = Open(context.Background(), Source{Location: orc}, "s3://src-bucket/t", Options{})
	if err == nil || !strings.Contains(err.Error(), `S3 Inventory reports in "ORC" format are not supported`) {
		t.Errorf("got %v", err)
	}
}

func TestS3Parquet(t *testing.T) {
	type s3Row struct {
		Bucket         string    `parquet:"bucket"`
		Key            string    `parquet:"key"`
		IsLatest       bool      `parquet:"is_latest"`
		IsDeleteMarker bool      `parquet:"is_delete_marker"`
		Size           *int64    `parquet:"size,optional"`
		LastModified   time.Time `parquet:"last_modified_date,timestamp(millisecond)"`
	}
	size := func(n int64) *int64 { return &n }
	at := time.UnixMilli(ms("2016-11-06T21:32:47.123Z"))
	bucket := t.TempDir()
	var files = map[string][]byte{}
	for name, rows := range map[string][]s3Row{
		"a.parquet": {
			{Bucket: "src-bucket", Key: "t/a+b%3D.parquet", IsLatest: true, Size: size(20), LastModified: at},
			{Bucket: "src-bucket", Key: "t/gone", IsLatest: true, IsDeleteMarker: true, LastModified: at},
		},
		"b.parquet": {
			{Bucket: "src-bucket", Key: "t/dir/", IsLatest: true, Size: size(0), LastModified: at},
			{Bucket: "src-bucket", Key: "u/x", IsLatest: true, Size: size(1), LastModified: at},
		},
	} {
		p := filepath.Join(t.TempDir(), name)
		writeParquet(t, p, rows)
		files[name] = mustRead(t, p)
	}
	dir := s3Bucket(t, bucket, "Parquet", "message s3.inventory { required binary bucket (UTF8); required binary key (UTF8); ... }", files)
	l := open(t, Source{Location: dir}, "s3://src-bucket/t")
	diff(t, walk(t, l, ""), []string{fmt.Sprintf("a+b%%3D.parquet 20 %d", at.UnixMilli()), fmt.Sprintf("dir/ 0 %d", at.UnixMilli())})
	if l.Ignored() != 1 || l.Skipped() != 1 {
		t.Errorf("ignored %d, skipped %d; want 1, 1", l.Ignored(), l.Skipped())
	}
}

// TestStoreOpener reads an inventory through Options.Open from an object store without
// directory markers.
func TestStoreOpener(t *testing.T) {
	store := mem.New("s3://inventories/")
	var buf strings.Builder
	buf.WriteString("path,length,isDir,modificationTime\n")
	buf.WriteString("s3://bucket/t/x,1,false,5\ns3a://bucket/t/y/z,2,false,6\ns3://bucket/u,1,false,1\n")
	store.PutAt("daily/2024-01-01/part-00000.csv", []byte(buf.String()), time.Now())
	store.PutAt("daily/2024-01-01/_SUCCESS", nil, time.Now())
	var opened []string
	opener := func(want string) Options {
		return Options{Open: func(ctx context.Context, location string) (storage.Store, error) {
			opened = append(opened, location)
			if location != want {
				return nil, fmt.Errorf("unexpected location %s", location)
			}
			return store, nil
		}}
	}
	opts := opener("s3://inventories/")
	for _, tc := range []struct{ location, base string }{
		{"s3://inventories/daily/2024-01-01", "s3://inventories/"},
		{"s3://inventories/daily/2024-01-01/", "s3://inventories/"},
		{"s3a://inventories/daily/2024-01-01/part-00000.csv", "s3a://inventories/"},
	} {
		opened = nil
		l, err := Open(context.Background(), Source{Location: tc.location}, "s3://bucket/t", opener(tc.base))
		if err != nil {
			t.Fatal(err)
		}
		diff(t, walk(t, l, ""), []string{"x 1 5", "y/ 0 -", "y/z 2 6"})
		if len(opened) != 1 {
			t.Errorf("opened %q, want one store", opened)
		}
	}

	// An inventory at the root of a container.
	container := mem.New("abfss://inv@acct.dfs.core.windows.net/")
	container.PutAt("part-0.csv", []byte("path,length,isDir,modificationTime\nabfss://c@acct.dfs.core.windows.net/t/x,1,false,5\n"), time.Now())
	l, err := Open(context.Background(), Source{Location: "abfss://inv@acct.dfs.core.windows.net"}, azureRoot, Options{
		Open: func(ctx context.Context, location string) (storage.Store, error) {
			if location != "abfss://inv@acct.dfs.core.windows.net/" {
				return nil, fmt.Errorf("unexpected location %s", location)
			}
			return container, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, walk(t, l, ""), []string{"x 1 5"})

	_, err = Open(context.Background(), Source{Location: "s3://inventories/nope"}, "s3://bucket/t", opts)
	if err == nil || !strings.Contains(err.Error(), "inventory s3://inventories/nope does not exist") {
		t.Errorf("got %v", err)
	}
	_, err = Open(context.Background(), Source{Location: "s3://inventories/x.csv"}, "s3://bucket/t", Options{})
	if err == nil || !strings.Contains(err.Error(), "the s3: scheme is not supported without a store opener") {
		t.Errorf("got %v", err)
	}
}
