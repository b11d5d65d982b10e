package adversarial

// Odd names on object stores: keys a batch delete's XML rewrites (S3, also reached through an
// S3 Inventory report), keys a request escapes or leaves as they are (Azure Blob Batch, GCS),
// a blob with data that Azure lists under the name of a folder (hdi_isfolder). Each test
// asserts the safe behaviour, so it fails while the bug it names is there, and says which
// review found it. They run on fresh prefixes of the loopback test servers (set -a;
// . .cache/testservers.env; set +a) and skip when a server is not configured.

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/inventory"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/azure"
	"github.com/deltavacuum/deltavacuum/storage/s3"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// TestS3BatchDeleteRewritesControlCharacters: S3's DeleteObjects names its keys in an
// XML body. XML 1.0 cannot hold most control characters (U+0001 to U+001F but tab, LF and CR),
// and the AWS SDK's XML encoder (smithy-go encoding/xml escapeString) silently writes U+FFFD in
// their place. A batch delete of the key "a\x01.parquet" therefore deletes "a\uFFFD.parquet",
// another object. The log can name such a key (a remove of "a%01.parquet" decodes to it), so
// LITE plans it, and the batch deletes the live file "a\uFFFD.parquet" instead. (The response
// names a key the request did not hold: the store reports "key missing from the DeleteObjects
// response" and retries, deleting the other key again each time.)
// Found by the second review.
func TestS3BatchDeleteRewritesControlCharacters(t *testing.T) {
	for _, c := range []struct{ name, logPath, key string }{
		{"percent-encoded U+0001", "a%01.parquet", "a\x01.parquet"},
		{"raw U+FFFE", "a\uFFFE.parquet", "a\uFFFE.parquet"},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := newS3WithOddKeys(t, c.key)
			tb := newStoreTable(t, store)
			live := "a\uFFFD.parquet"
			tb.commit(addLine(live), addLine(c.logPath), addLine("b.parquet"))
			tb.commit(removeLine(c.logPath), removeLine("b.parquet"))
			tb.put(live)
			tb.put(c.key)
			tb.put("b.parquet")

			res, err := vacuumStore(t, store, vacuum.ModeLite, nil)
			t.Logf("LITE: %v", err)
			if res != nil {
				t.Logf("deleted %d, failed %+v", res.NumDeletedFiles, res.Failed)
			}
			tb.mustExist(live)
		})
	}
}

// newS3WithOddKeys returns a store on a fresh prefix of the S3 test bucket whose keys odd (which a
// batch delete cannot name) are deleted singly when the test ends, before the prefix is emptied.
func newS3WithOddKeys(t *testing.T, odd ...string) storage.Store {
	t.Helper()
	cfg := storagetest.S3Config(t)
	store := storagetest.NewS3Config(t, cfg)
	cfg.BatchSize = 1
	single, err := s3.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := single.Delete(context.Background(), odd); err != nil {
			t.Logf("deleting %q: %v", odd, err)
		}
	})
	return store
}

// s3BucketAndPrefix splits the location of an S3 store, s3://BUCKET/PREFIX.
func s3BucketAndPrefix(t testing.TB, store storage.Store) (bucket, prefix string) {
	t.Helper()
	rest, ok := strings.CutPrefix(store.Location(), "s3://")
	if !ok {
		t.Fatalf("not an S3 location: %s", store.Location())
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	return bucket, prefix
}

// writeS3Inventory writes an Amazon S3 Inventory report in CSV (keys URL-encoded, as S3 writes
// them) into a local directory laid out as the destination bucket, and returns its manifest.
func writeS3Inventory(t testing.TB, sourceBucket string, rows []string) string {
	t.Helper()
	dest := t.TempDir()
	data := filepath.Join(dest, "inv", "data", "a.csv")
	writeFile(t, data, []byte(strings.Join(rows, "\n")+"\n"))
	manifest := filepath.Join(dest, "inv", "2026-11-30T00-00Z", "manifest.json")
	writeFile(t, manifest, []byte(fmt.Sprintf(`{"sourceBucket": %q, "destinationBucket": "arn:aws:s3:::dest",
  "version": "2016-11-30", "fileFormat": "CSV", "fileSchema": "Bucket, Key, Size, LastModifiedDate",
  "files": [{"key": "inv/data/a.csv", "size": 1, "MD5checksum": "x"}]}`, sourceBucket)))
	return manifest
}

// TestS3InventoryControlCharacterDeletesLiveFile: the same rewrite of DeleteObjects,
// reached through USING INVENTORY with an S3 Inventory report. S3 keys may hold control
// characters; the CSV report writes them URL-encoded ("a%01.parquet"), which the inventory
// reader decodes to "a\x01.parquet", an untracked (old) file. The batch delete of it deletes
// the live file "a\uFFFD.parquet" (U+FFFD is an ordinary character of a key: a writer that
// replaced an undecodable byte wrote it). U+FFFE, valid UTF-8 that XML cannot hold either,
// does the same, and a row decoding to invalid UTF-8 ("%FF") too.
// Found by the second review.
func TestS3InventoryControlCharacterDeletesLiveFile(t *testing.T) {
	for _, odd := range []string{"%01", "%EF%BF%BE", "%FF"} {
		t.Run(odd, func(t *testing.T) {
			decoded, _ := url.QueryUnescape("a" + odd + ".parquet")
			store := newS3WithOddKeys(t, decoded)
			bucket, prefix := s3BucketAndPrefix(t, store)
			tb := newStoreTable(t, store)
			live := "a\uFFFD.parquet"
			tb.commit(addLine(live))
			tb.put(live)
			tb.put("b.parquet")
			if utf8.ValidString(decoded) {
				tb.put(decoded) // an object S3 can hold (the invalid UTF-8 one it cannot)
			}
			old := "2026-01-01T00:00:00.000Z"
			manifest := writeS3Inventory(t, bucket, []string{
				fmt.Sprintf(`"%s","%s/a%%EF%%BF%%BD.parquet","%d","%s"`, bucket, prefix, 10, old),
				fmt.Sprintf(`"%s","%s/a%s.parquet","%d","%s"`, bucket, prefix, odd, 10, old),
				fmt.Sprintf(`"%s","%s/b.parquet","%d","%s"`, bucket, prefix, 10, old),
			})
			listing, err := inventory.Open(context.Background(), inventory.Source{Location: manifest}, store.Location(), inventory.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := vacuumStore(t, store, vacuum.ModeFull, listing)
			t.Logf("FULL USING INVENTORY: %v", err)
			if res != nil {
				t.Logf("deleted %d, failed %+v", res.NumDeletedFiles, res.Failed)
			}
			tb.mustExist(live)
		})
	}
}

// TestAzureFolderMetadataOnALiveFile: on Azure a blob whose metadata says
// hdi_isfolder=true is taken for a directory (a WASB folder blob, an ADLS Gen2 directory seen
// through the Blob API), whatever it holds: the listing reports it as the directory "d/" with
// size 0, never as the file "d" (azure.go isDir/entry; Head alike). A blob with data that
// carries this metadata (set by a tool that copied a folder blob's metadata, or by anyone who
// can write metadata) is then
//   - a live data file: an empty directory to the planner (the protected key "d" is a file key,
//     the directory "d/" is not protected), and the executor deletes the "directory entity",
//     which is the blob "d" with its data;
//   - the newest commit: a directory in _delta_log/, skipped by the log listing, so the snapshot
//     silently ends one version early and the files only that commit adds are deleted as
//     untracked.
//
// A folder blob is a zero-byte blob; one with content is a file.
// Found by the second review.
func TestAzureFolderMetadataOnALiveFile(t *testing.T) {
	isFolder := "true"
	setFolder := func(t *testing.T, store *azure.Store, prefix, key string) {
		t.Helper()
		_, err := store.Client().NewBlobClient(prefix+key).SetMetadata(context.Background(), map[string]*string{"hdi_isfolder": &isFolder}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Run("live data file", func(t *testing.T) {
		cfg := storagetest.AzureConfig(t)
		store := storagetest.NewAzureConfig(t, cfg)
		prefix := strings.Trim(cfg.Prefix, "/") + "/"
		tb := newStoreTable(t, store)
		tb.commit(addLine("d"), addLine("part-0.parquet"))
		tb.put("d")
		tb.put("part-0.parquet")
		setFolder(t, store, prefix, "d")
		res, err := vacuumStore(t, store, vacuum.ModeFull, nil)
		t.Logf("FULL: %v", err)
		if res != nil {
			t.Logf("files %+v, directories %+v, deleted directories %d", res.Files, res.Dirs, res.NumDeletedDirectories)
		}
		if _, err := store.Client().NewBlobClient(prefix+"d").GetProperties(context.Background(), nil); err != nil {
			t.Errorf("the live file d (a blob with data and hdi_isfolder=true) was deleted: %v", bloberrorCode(err))
		}
		tb.mustExist("part-0.parquet")
	})
	t.Run("newest commit", func(t *testing.T) {
		cfg := storagetest.AzureConfig(t)
		store := storagetest.NewAzureConfig(t, cfg)
		prefix := strings.Trim(cfg.Prefix, "/") + "/"
		tb := newStoreTable(t, store)
		tb.commit(addLine("a.parquet"))
		tb.commit(addLine("b.parquet"))
		tb.put("a.parquet")
		tb.put("b.parquet")
		setFolder(t, store, prefix, "_delta_log/00000000000000000002.json")
		// A real run is saved by the re-check before deleting (its probe of version 2 finds a
		// "directory" and stops the run); the DRY RUN, which a user reads to decide, lists the
		// live file b.parquet as untracked.
		retain := 0.0
		res, err := deltavacuum.OpenStore(store).Vacuum(context.Background(), deltavacuum.VacuumOptions{
			Options: vacuum.Options{RetainHours: &retain, DisableRetentionCheck: true, Now: time.Now().Add(30 * time.Second)},
			DryRun:  true,
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range res.Files.MustCollect() {
			if f.Path == "b.parquet" {
				t.Errorf("DRY RUN at version %d plans the live b.parquet (added by version 2) as %s", res.Version, f.Reason)
			}
		}
	})
}

// bloberrorCode shortens an Azure SDK error (it spans many lines) to its first line.
func bloberrorCode(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// oddNamePairs are (unreferenced, live) key pairs: the first is planned for deletion, the
// second is a live file a mis-encoded or mis-decoded request for the first could reach.
var oddNamePairs = [][2]string{
	{"a+b.parquet", "a b.parquet"},
	{"c%2Bd.parquet", "c+d.parquet"},
	{"e%20f.parquet", "e f.parquet"},
	{"g%2Fh.parquet", "g/h.parquet"},
	{"i\\j.parquet", "i/j.parquet"},
	{"k#l.parquet", "k"},
	{"m?n.parquet", "m"},
	{"o;p.parquet", "o"},
	{"q&r=s.parquet", "q"},
	{"t%25u.parquet", "t%u.parquet"},
	{"v:w@x$y.parquet", "v"},
	{"z\u00e9.parquet", "ze\u0301.parquet"},
	{"A.parquet", "a.parquet"},
	{"k2.parquet.", "k2.parquet"},
	{"dd./x.parquet", "dd/x.parquet"},
	{"ee /x.parquet", "ee/x.parquet"},
	{"ff%2e%2e/x.parquet", "x.parquet"},
	{"gg/%2e%2e/y.parquet", "y.parquet"},
	{"hh/..%2fz.parquet", "z.parquet"},
}

func escapedLogPath(key string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// vacuumOddNames runs FULL on store with every pair: the unreferenced keys must go, the live ones
// must stay.
func vacuumOddNames(t *testing.T, store storage.Store) {
	tb := newStoreTable(t, store)
	var adds []string
	for _, p := range oddNamePairs {
		adds = append(adds, addLine(escapedLogPath(p[1])))
	}
	tb.commit(adds...)
	for _, p := range oddNamePairs {
		tb.put(p[1])
	}
	for _, p := range oddNamePairs {
		tb.put(p[0])
	}
	res, err := vacuumStore(t, store, vacuum.ModeFull, nil)
	if err != nil {
		t.Fatalf("FULL: %v", err)
	}
	planned := map[string]bool{}
	for _, f := range res.Files.MustCollect() {
		planned[f.Path] = true
	}
	for _, p := range oddNamePairs {
		if !tb.exists(p[1]) {
			t.Errorf("live %q was deleted (planned: %v; its unreferenced twin %q)", p[1], planned[p[1]], p[0])
		}
		if tb.exists(p[0]) {
			t.Logf("unreferenced %q is still there (planned %v)", p[0], planned[p[0]])
		}
	}
}

// TestAzureBatchOddNamesGuard (guard): keys with characters the Blob Batch
// sub-request URL escapes or leaves as they are (+, %, space, #, ?, ;, &, =, :, @, $, a
// backslash, a trailing dot, dot segments spelled with %2e) delete only themselves, never the
// live key a mis-encoding would name. Verified to pass on Azurite.
// A guard written in the third review.
func TestAzureBatchOddNamesGuard(t *testing.T) {
	vacuumOddNames(t, storagetest.NewAzure(t))
}

// TestGCSOddNamesGuard (guard): the same keys on GCS (single JSON API deletes).
// Verified to pass on fake-gcs-server.
// A guard written in the third review.
func TestGCSOddNamesGuard(t *testing.T) {
	vacuumOddNames(t, storagetest.NewGCS(t))
}
