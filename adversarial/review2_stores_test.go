package adversarial

// Attacks on the object-store and inventory paths, found in the second review (review2).
// Each test asserts the safe behaviour, so it fails while the bug it names is there. They run
// on fresh prefixes of the loopback test servers (set -a; . .cache/testservers.env; set +a)
// and skip when a server is not configured.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/inventory"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/azure"
	"github.com/deltavacuum/deltavacuum/storage/mem"
	"github.com/deltavacuum/deltavacuum/storage/s3"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// r2sTable is a Delta table on a store (an object-store prefix), its commits written line by
// line as given.
type r2sTable struct {
	t       testing.TB
	store   storage.Store
	version int64
}

func r2sNewTable(t testing.TB, store storage.Store) *r2sTable {
	t.Helper()
	tb := &r2sTable{t: t, store: store, version: -1}
	tb.commit(protocolLine, metadataLine)
	return tb
}

func (tb *r2sTable) commit(lines ...string) {
	tb.t.Helper()
	tb.version++
	key := "_delta_log/" + fmt.Sprintf("%020d", tb.version) + ".json"
	if err := tb.store.Put(context.Background(), key, []byte(strings.Join(lines, "\n")+"\n")); err != nil {
		tb.t.Fatalf("writing %s: %v", key, err)
	}
}

func (tb *r2sTable) put(key string) {
	tb.t.Helper()
	if err := tb.store.Put(context.Background(), key, []byte("data of "+key)); err != nil {
		tb.t.Fatalf("writing %q: %v", key, err)
	}
}

func (tb *r2sTable) exists(key string) bool {
	tb.t.Helper()
	_, err := tb.store.Stat(context.Background(), key)
	if err != nil && !errors.Is(err, storage.ErrNotExist) {
		tb.t.Fatalf("stat %q: %v", key, err)
	}
	return err == nil
}

func (tb *r2sTable) mustExist(keys ...string) {
	tb.t.Helper()
	for _, k := range keys {
		if !tb.exists(k) {
			tb.t.Errorf("%q was deleted: it is live", k)
		}
	}
}

// r2sVacuum runs a real VACUUM RETAIN 0 HOURS (check off) of the table on store, with a
// clock 30 seconds ahead (within the minute the clock check allows) so that the objects the
// server just wrote count as old.
func r2sVacuum(t *testing.T, store storage.Store, mode vacuum.Mode, inv vacuum.Walker) (*vacuum.Result, error) {
	t.Helper()
	retain := 0.0
	return deltavacuum.OpenStore(store).Vacuum(context.Background(), deltavacuum.VacuumOptions{
		Options: vacuum.Options{
			RetainHours: &retain, DisableRetentionCheck: true, Mode: mode, Inventory: inv,
			Now: time.Now().Add(30 * time.Second),
		},
	})
}

// TestReview2StoresS3BatchDeleteRewritesControlCharacters: S3's DeleteObjects names its keys in an
// XML body. XML 1.0 cannot hold most control characters (U+0001 to U+001F but tab, LF and CR),
// and the AWS SDK's XML encoder (smithy-go encoding/xml escapeString) silently writes U+FFFD in
// their place. A batch delete of the key "a\x01.parquet" therefore deletes "a\uFFFD.parquet",
// another object. The log can name such a key (a remove of "a%01.parquet" decodes to it), so
// LITE plans it, and the batch deletes the live file "a\uFFFD.parquet" instead. (The response
// names a key the request did not hold: the store reports "key missing from the DeleteObjects
// response" and retries, deleting the other key again each time.)
func TestReview2StoresS3BatchDeleteRewritesControlCharacters(t *testing.T) {
	for _, c := range []struct{ name, logPath, key string }{
		{"percent-encoded U+0001", "a%01.parquet", "a\x01.parquet"},
		{"raw U+FFFE", "a\uFFFE.parquet", "a\uFFFE.parquet"},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := r2sNewS3(t, c.key)
			tb := r2sNewTable(t, store)
			live := "a\uFFFD.parquet"
			tb.commit(addLine(live), addLine(c.logPath), addLine("b.parquet"))
			tb.commit(removeLine(c.logPath), removeLine("b.parquet"))
			tb.put(live)
			tb.put(c.key)
			tb.put("b.parquet")

			res, err := r2sVacuum(t, store, vacuum.ModeLite, nil)
			t.Logf("LITE: %v", err)
			if res != nil {
				t.Logf("deleted %d, failed %+v", res.NumDeletedFiles, res.Failed)
			}
			tb.mustExist(live)
		})
	}
}

// r2sNewS3 returns a store on a fresh prefix of the S3 test bucket whose keys odd (which a
// batch delete cannot name) are deleted singly when the test ends, before the prefix is emptied.
func r2sNewS3(t *testing.T, odd ...string) storage.Store {
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

// r2sS3Location splits the location of an S3 store, s3://BUCKET/PREFIX.
func r2sS3Location(t testing.TB, store storage.Store) (bucket, prefix string) {
	t.Helper()
	rest, ok := strings.CutPrefix(store.Location(), "s3://")
	if !ok {
		t.Fatalf("not an S3 location: %s", store.Location())
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	return bucket, prefix
}

// r2sWriteS3Inventory writes an Amazon S3 Inventory report in CSV (keys URL-encoded, as S3 writes
// them) into a local directory laid out as the destination bucket, and returns its manifest.
func r2sWriteS3Inventory(t testing.TB, sourceBucket string, rows []string) string {
	t.Helper()
	dest := t.TempDir()
	data := filepath.Join(dest, "inv", "data", "a.csv")
	r2sWrite(t, data, []byte(strings.Join(rows, "\n")+"\n"))
	manifest := filepath.Join(dest, "inv", "2026-11-30T00-00Z", "manifest.json")
	r2sWrite(t, manifest, []byte(fmt.Sprintf(`{"sourceBucket": %q, "destinationBucket": "arn:aws:s3:::dest",
  "version": "2016-11-30", "fileFormat": "CSV", "fileSchema": "Bucket, Key, Size, LastModifiedDate",
  "files": [{"key": "inv/data/a.csv", "size": 1, "MD5checksum": "x"}]}`, sourceBucket)))
	return manifest
}

func r2sWrite(t testing.TB, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReview2StoresS3InventoryControlCharacterDeletesLiveFile: the same rewrite of DeleteObjects,
// reached through USING INVENTORY with an S3 Inventory report. S3 keys may hold control
// characters; the CSV report writes them URL-encoded ("a%01.parquet"), which the inventory
// reader decodes to "a\x01.parquet", an untracked (old) file. The batch delete of it deletes
// the live file "a\uFFFD.parquet" (U+FFFD is an ordinary character of a key: a writer that
// replaced an undecodable byte wrote it). U+FFFE, valid UTF-8 that XML cannot hold either,
// does the same, and a row decoding to invalid UTF-8 ("%FF") too.
func TestReview2StoresS3InventoryControlCharacterDeletesLiveFile(t *testing.T) {
	for _, odd := range []string{"%01", "%EF%BF%BE", "%FF"} {
		t.Run(odd, func(t *testing.T) {
			decoded, _ := url.QueryUnescape("a" + odd + ".parquet")
			store := r2sNewS3(t, decoded)
			bucket, prefix := r2sS3Location(t, store)
			tb := r2sNewTable(t, store)
			live := "a\uFFFD.parquet"
			tb.commit(addLine(live))
			tb.put(live)
			tb.put("b.parquet")
			if utf8.ValidString(decoded) {
				tb.put(decoded) // an object S3 can hold (the invalid UTF-8 one it cannot)
			}
			old := "2026-01-01T00:00:00.000Z"
			manifest := r2sWriteS3Inventory(t, bucket, []string{
				fmt.Sprintf(`"%s","%s/a%%EF%%BF%%BD.parquet","%d","%s"`, bucket, prefix, 10, old),
				fmt.Sprintf(`"%s","%s/a%s.parquet","%d","%s"`, bucket, prefix, odd, 10, old),
				fmt.Sprintf(`"%s","%s/b.parquet","%d","%s"`, bucket, prefix, 10, old),
			})
			listing, err := inventory.Open(context.Background(), inventory.Source{Location: manifest}, store.Location(), inventory.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := r2sVacuum(t, store, vacuum.ModeFull, listing)
			t.Logf("FULL USING INVENTORY: %v", err)
			if res != nil {
				t.Logf("deleted %d, failed %+v", res.NumDeletedFiles, res.Failed)
			}
			tb.mustExist(live)
		})
	}
}

// TestReview2StoresAzureFolderMetadataOnALiveFile: on Azure a blob whose metadata says
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
func TestReview2StoresAzureFolderMetadataOnALiveFile(t *testing.T) {
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
		tb := r2sNewTable(t, store)
		tb.commit(addLine("d"), addLine("part-0.parquet"))
		tb.put("d")
		tb.put("part-0.parquet")
		setFolder(t, store, prefix, "d")
		res, err := r2sVacuum(t, store, vacuum.ModeFull, nil)
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
		tb := r2sNewTable(t, store)
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

// r2sInventoryCSV writes an inventory (path, length, isDir, modificationTime) of every file and
// directory below dir, as a storage inventory report lists them, and returns its path.
func r2sInventoryCSV(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("path,length,isDir,modificationTime\n")
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == dir {
			return err
		}
		size := fi.Size()
		if fi.IsDir() {
			size = 0
		}
		fmt.Fprintf(&b, "%q,%d,%v,%d\n", "file://"+p, size, fi.IsDir(), fi.ModTime().UnixMilli())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	inv := filepath.Join(t.TempDir(), "inventory.csv")
	r2sWrite(t, inv, []byte(b.String()))
	return inv
}

// TestReview2StoresNestedTableThroughAFilteredInventory: FULL never descends into a folder
// that holds a _delta_log of its own (another Delta table saved into this one): the listing
// sees the folder's _delta_log and the planner takes back what it planned there. USING
// INVENTORY applies "FULL's rules", but the planner only learns of the nested table from an
// inventory row below its _delta_log. An inventory without such rows, such as the natural
// query that keeps the data files only (WHERE path LIKE '%.parquet'; or a report whose rule
// filters on a suffix), makes the nested table's live files untracked files of the outer
// table, and they are deleted. The store can tell (one Stat of DIR/_delta_log/ per directory
// with candidates); the inventory cannot be trusted to.
func TestReview2StoresNestedTableThroughAFilteredInventory(t *testing.T) {
	outer := newLocalTable(t)
	inner := newLocalTableIn(t, filepath.Join(outer.dir, "inner"))
	inner.commit(addLine("part-0.parquet"))
	inner.file("part-0.parquet", 30*day)
	outer.file("junk.parquet", 30*day)
	inv := r2sInventoryCSV(t, outer.dir)

	// The whole inventory: the nested table is seen and left alone (the guard).
	code, stderr := vacuumNow(t, outer.dir, "--dry-run", "--inventory", inv)
	if code != 0 || !strings.Contains(stderr, "inner/ holds a _delta_log of its own") {
		t.Fatalf("whole inventory: exit %d, %q; want the nested table reported", code, stderr)
	}
	code, stderr = vacuumNow(t, outer.dir, "--inventory", "(SELECT * FROM csv.`"+inv+"` WHERE path LIKE '%.parquet')")
	t.Logf("filtered inventory: exit %d: %s", code, stderr)
	outer.mustExist("inner/part-0.parquet")
	if outer.exists("junk.parquet") {
		t.Error("the outer table's own junk was kept: the test tests nothing")
	}
}

// TestReview2StoresAzureTwinHostsInLogPaths: an absolute log path protects its file when its
// scheme and authority are those of the table root, "the dfs and blob hosts of one Azure
// account alike" (the contract, section 7). deltalog.NormalizeAuthority maps the Blob host to
// the DFS host only for the public cloud (.blob.core.windows.net) and OneLake, while
// storage/azure documents, and location.Open serves, the same twins for Azure in China
// (.core.chinacloudapi.cn), Azure Government (.core.usgovcloudapi.net) and the DNS-zone
// endpoints (ACCOUNT.zNN.blob.storage.azure.net). A table there, opened as abfss:// (and
// reported so: its canonical spelling), whose log names a live file by its wasbs:// (Blob host)
// path, as WASB writers write it, has that file outside the root: it is not protected, and
// FULL deletes it as untracked. The public-cloud case is the guard.
func TestReview2StoresAzureTwinHostsInLogPaths(t *testing.T) {
	for _, c := range []struct{ name, dfs, blob string }{
		{"public cloud (guard)", "acct.dfs.core.windows.net", "acct.blob.core.windows.net"},
		{"Azure Government", "acct.dfs.core.usgovcloudapi.net", "acct.blob.core.usgovcloudapi.net"},
		{"Azure in China", "acct.dfs.core.chinacloudapi.cn", "acct.blob.core.chinacloudapi.cn"},
		{"DNS zone endpoint", "acct.z42.dfs.storage.azure.net", "acct.z42.blob.storage.azure.net"},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := mem.New("abfss://c@" + c.dfs + "/t")
			old := time.Now().Add(-30 * day)
			put := func(key, data string) { store.PutAt(key, []byte(data), old) }
			put("_delta_log/00000000000000000000.json", protocolLine+"\n"+metadataLine+"\n")
			put("_delta_log/00000000000000000001.json", addLine("wasbs://c@"+c.blob+"/t/live.parquet")+"\n")
			put("live.parquet", "live")
			put("junk.parquet", "junk")
			retain := 0.0
			res, err := deltavacuum.OpenStore(store).Vacuum(context.Background(), deltavacuum.VacuumOptions{
				Options: vacuum.Options{RetainHours: &retain, DisableRetentionCheck: true}})
			if err != nil {
				t.Fatal(err)
			}
			var deleted []string
			for _, f := range res.Files.MustCollect() {
				deleted = append(deleted, f.Path)
			}
			for _, k := range deleted {
				if k == "live.parquet" {
					t.Errorf("deleted %v: live.parquet is live (named as wasbs://c@%s/t/live.parquet)", deleted, c.blob)
				}
			}
		})
	}
}
