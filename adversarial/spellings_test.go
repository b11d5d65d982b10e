package adversarial

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/storage/location"
	"github.com/deltavacuum/deltavacuum/storage/mem"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// TestOneFileSeveralSpellings: a log path that can be read more than one way keeps the file
// whichever reading names it: '#' and '?' (a fragment and a query to a URI parser, part of the
// name to a writer that did not escape them), file://localhost/, a relative and an absolute
// spelling, '%' left unescaped, '+' for a space, Unicode NFC and NFD, and the case a
// case-insensitive file system ignores.
func TestOneFileSeveralSpellings(t *testing.T) {
	tb := newLocalTable(t)
	abs := "file://" + filepath.ToSlash(tb.dir)
	cases := []struct{ logPath, onDisk string }{
		{"a#1.parquet", "a#1.parquet"},
		{"b#1.parquet", "b"},
		{"c?x=1.parquet", "c?x=1.parquet"},
		{"d?x=1.parquet", "d"},
		{"file://localhost" + filepath.ToSlash(tb.dir) + "/e.parquet", "e.parquet"},
		{abs + "/f.parquet", "f.parquet"},
		{"p=10%3A00/g.parquet", "p=10%3A00/g.parquet"}, // '%' that the writer did not escape
		{"h+1.parquet", "h 1.parquet"},
		{"caf%C3%A9.parquet", "cafe\u0301.parquet"},
		{"Part-0.parquet", "part-0.parquet"},
		{abs + "/i%23x.parquet", "i#x.parquet"},
	}
	var adds []string
	for _, c := range cases {
		adds = append(adds, addLine(c.logPath))
		tb.file(c.onDisk, 30*day)
	}
	tb.commit(adds...)
	tb.file("junk.parquet", 30*day)
	if code, stderr := vacuumNow(t, tb.dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, c := range cases {
		if !tb.exists(c.onDisk) {
			t.Errorf("%s (the log says %s) was deleted: it is live", c.onDisk, c.logPath)
		}
	}
	if tb.exists("junk.parquet") {
		t.Error("junk.parquet was kept: the vacuum did not run")
	}
}

// TestOneVersionTwoFiles: 1.json beside 00000000000000000001.json is two claims on version 1
// (Spark's \d+\.json reads both); whichever holds the live files, the table is refused.
func TestOneVersionTwoFiles(t *testing.T) {
	tb := newLocalTable(t)
	tb.commit(addLine("a.parquet"))
	tb.file("a.parquet", 30*day)
	tb.file("b.parquet", 30*day)
	if err := os.WriteFile(filepath.Join(tb.dir, "_delta_log", "1.json"), []byte(addLine("b.parquet")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr := vacuumNow(t, tb.dir)
	if code != 1 || !strings.Contains(stderr, "two commit files claim version 1") {
		t.Errorf("exit %d, %q; want a refusal naming both files", code, stderr)
	}
	tb.mustExist("a.parquet", "b.parquet")
}

// TestCommitWithTwentyOneDigitName: Spark's \d+\.json reads 000000000000000000002.json
// (21 digits) as version 2, and its listFrom("00000000000000000000.") lists it. deltavacuum's
// parseVersion takes at most 20 digits and ignores the file: the table is read at version 1
// and the file only version 2 adds is deleted as untracked. The contract refuses a second
// spelling of a version (section 2.6); a version in that spelling alone must not be
// ignored either (refusing is the safe answer; reading it would be too).
// Found by the first review, of the deletion paths.
func TestCommitWithTwentyOneDigitName(t *testing.T) {
	tb := newLocalTable(t)
	tb.commit(addLine("a.parquet"))
	tb.file("a.parquet", 30*day)
	tb.file("b.parquet", 30*day)
	p := filepath.Join(tb.dir, "_delta_log", "000000000000000000002.json")
	if err := os.WriteFile(p, []byte(addLine("b.parquet")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr := vacuumNow(t, tb.dir)
	t.Logf("exit %d: %s", code, stderr)
	tb.mustExist("a.parquet", "b.parquet")
}

// TestWriterFeatures: a feature about the content of data files does not stop VACUUM (Spark
// vacuums such tables); commits kept outside _delta_log/ (coordinated, catalog-managed) and
// unknown features do, before anything is listed.
func TestWriterFeatures(t *testing.T) {
	protocol := func(writer ...string) string {
		return fmt.Sprintf(`{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["%s"]}}`, strings.Join(writer, `","`))
	}
	t.Run("materializePartitionColumns", func(t *testing.T) {
		tb := newLocalTableIn(t, t.TempDir(), protocol("materializePartitionColumns", "appendOnly", "invariants"), metadataLine)
		tb.commit(addLine("live.parquet"))
		tb.file("live.parquet", 30*day)
		tb.file("junk.parquet", 30*day)
		if code, stderr := vacuumNow(t, tb.dir); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		tb.mustExist("live.parquet")
		if tb.exists("junk.parquet") {
			t.Error("junk.parquet was kept")
		}
	})
	for _, f := range []string{"coordinatedCommits-preview", "someFutureFeature", "MaterializePartitionColumns"} {
		t.Run(f, func(t *testing.T) {
			tb := newLocalTableIn(t, t.TempDir(), protocol(f), metadataLine)
			tb.file("junk.parquet", 30*day)
			code, stderr := vacuumNow(t, tb.dir)
			if code != 1 || !strings.Contains(stderr, f) {
				t.Errorf("exit %d, %q; want a refusal naming %s", code, stderr, f)
			}
			tb.mustExist("junk.parquet")
		})
	}
	t.Run("unbackfilled coordinated commits", func(t *testing.T) {
		tb := newLocalTable(t)
		tb.file("_delta_log/_commits/00000000000000000001.0a1b2c3d-0000-4000-8000-000000000000.json", day)
		tb.file("junk.parquet", 30*day)
		code, stderr := vacuumNow(t, tb.dir)
		if code != 1 || !strings.Contains(stderr, "_delta_log/_commits/") {
			t.Errorf("exit %d, %q; want a refusal", code, stderr)
		}
		tb.mustExist("junk.parquet")
	})
}

// TestAbsolutePathThroughAnotherSpellingOfTheRoot: a log path that is absolute names a
// file inside the table through the real path of the table's folder, while the user names the
// table through a symbolic link above it (/data -> /mnt/data; /tmp -> /private/tmp on macOS),
// or the other way round. Root.Key compares the path with the root as the user spelled it, so
// the live file counts as "outside the table": it is not protected and the listing, which
// finds it under the root, deletes it as untracked. The local store knows the root's real
// path (Store.roots); one file has two absolute spellings, both must protect it (or the run
// must be refused).
// Found by the first review, of the deletion paths.
func TestAbsolutePathThroughAnotherSpellingOfTheRoot(t *testing.T) {
	realParent := t.TempDir()
	linkParent := filepath.Join(t.TempDir(), "data")
	symlink(t, realParent, linkParent)
	for _, tc := range []struct{ name, logRoot, vacuumRoot string }{
		{"log names the real path, user the link", realParent, linkParent},
		{"log names the link, user the real path", linkParent, realParent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := strings.ReplaceAll(tc.name, " ", "-")
			tb := newLocalTableIn(t, filepath.Join(realParent, name))
			tb.commit(addLine("file://" + filepath.ToSlash(filepath.Join(tc.logRoot, name, "live.parquet"))))
			tb.file("live.parquet", 30*day)
			tb.file("junk.parquet", 30*day)
			code, stderr := vacuumNow(t, filepath.Join(tc.vacuumRoot, name))
			t.Logf("exit %d: %s", code, stderr)
			tb.mustExist("live.parquet")
		})
	}
}

// TestAzureLocationSpellingsOfOneTable: az://c/t, azure://c/t and
// https://acct.blob.core.windows.net/c/t are accepted table locations, and each names the same
// files as abfss://c@acct.dfs.core.windows.net/t. But the store reports the location as the
// user spelled it, and Root.Key only matches an absolute log path whose scheme family and
// authority equal the root's: with az:// the authority is the container alone, with https://
// the scheme is https. An add written with an absolute abfss:// path (third-party writers,
// OneLake) and a "p" deletion vector (an absolute URI by definition) are then "outside the
// table": neither is protected and the listing deletes both. The plan is made on an in-memory
// store with the Location the real Azure store reports, so no network is needed.
// Found by the first review, of the deletion paths.
func TestAzureLocationSpellingsOfOneTable(t *testing.T) {
	const abfss = "abfss://c@acct.dfs.core.windows.net/t/"
	opts := location.Options{"azure_storage_account_name": "acct", "azure_storage_account_key": "a2V5"}
	for _, uri := range []string{
		"abfss://c@acct.dfs.core.windows.net/t", // the control: passes
		"az://c/t",
		"azure://c/t",
		"https://acct.blob.core.windows.net/c/t",
		"https://acct.dfs.core.windows.net/c/t",
	} {
		t.Run(uri, func(t *testing.T) {
			st, err := location.Open(context.Background(), uri, opts)
			if err != nil {
				t.Fatal(err)
			}
			store := mem.New(st.Location())
			old := time.Now().Add(-30 * day)
			put := func(key, data string) { store.PutAt(key, []byte(data), old) }
			put("_delta_log/00000000000000000000.json", protocolLine+"\n"+metadataLine+"\n")
			put("_delta_log/00000000000000000001.json",
				`{"add":{"path":"`+abfss+`live.parquet","size":1,"modificationTime":0,"dataChange":true,"partitionValues":{},`+
					`"deletionVector":{"storageType":"p","pathOrInlineDv":"`+abfss+`dv/live.bin","offset":1,"sizeInBytes":10,"cardinality":1}}}`+"\n")
			put("live.parquet", "data")
			put("dv/live.bin", "dv")
			put("junk.parquet", "junk")
			table := deltavacuum.OpenStore(store)
			retain := 0.0
			plan, err := table.Plan(context.Background(), vacuum.Options{RetainHours: &retain, DisableRetentionCheck: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range plan.Files.MustCollect() {
				if f.Path == "live.parquet" || f.Path == "dv/live.bin" {
					t.Errorf("location %s (reported as %s): %s is planned for deletion (%s); the log names it as %s%s",
						uri, st.Location(), f.Path, f.Reason, abfss, f.Path)
				}
			}
		})
	}
}

// TestAzureTwinHostsInLogPaths: an absolute log path protects its file when its
// scheme and authority are those of the table root, "the dfs and blob hosts of one Azure
// account alike" (the contract, section 7). deltalog.NormalizeAuthority maps the Blob host to
// the DFS host only for the public cloud (.blob.core.windows.net) and OneLake, while
// storage/azure documents, and location.Open serves, the same twins for Azure in China
// (.core.chinacloudapi.cn), Azure Government (.core.usgovcloudapi.net) and the DNS-zone
// endpoints (ACCOUNT.zNN.blob.storage.azure.net). A table there, opened as abfss:// (and
// reported so: its canonical spelling), whose log names a live file by its wasbs:// (Blob host)
// path, as WASB writers write it, has that file outside the root: it is not protected, and
// FULL deletes it as untracked. The public-cloud case is the guard.
// Found by the second review.
func TestAzureTwinHostsInLogPaths(t *testing.T) {
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
