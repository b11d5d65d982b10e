package azure

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
)

// Restore, Recovery and Copy against fakeAccount (recovery_fake_test.go), which answers as
// Microsoft documents the Blob API; Azurite has no soft delete and no versioning.

// keys with a space, '%', '+', unicode and a Spark-escaped partition value.
var recoveryKeys = []string{"p=00%3A00/part 0+1é.parquet", "données/ünï cödé 100%.parquet", "_delta_log/00000000000000000001.json"}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rand.N(256))
	}
	return b
}

func deleteKey(t *testing.T, s *Store, key string) {
	t.Helper()
	res, err := s.Delete(context.Background(), []string{key})
	if err != nil || res[0].Err != nil || res[0].Gone {
		t.Fatalf("Delete(%q) = %+v, %v", key, res, err)
	}
}

func mustRead(t *testing.T, s *Store, key string) []byte {
	t.Helper()
	got, err := storage.ReadAll(context.Background(), s, key)
	if err != nil {
		t.Fatalf("ReadAll(%q): %v", key, err)
	}
	return got
}

// Put, delete through the store, restore, read back the same bytes: with soft delete (a flat
// account, and a hierarchical-namespace one, whose undelete names the deletion id) and with
// versioning; a checksum companion, recorded without its size, too.
func TestRestoreRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name       string
		softDays   int
		versioning bool
		hns        bool
	}{
		{"soft delete", 7, false, false},
		{"soft delete HNS", 7, false, true},
		{"versioning", 0, true, false},
		{"versioning and soft delete", 14, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, srv := newFakeAccount(t)
			f.softDays, f.versioning, f.hns = tc.softDays, tc.versioning, tc.hns
			f.refuseVersions = tc.hns
			s := f.store(t, srv)
			ctx := context.Background()
			for i, key := range recoveryKeys {
				data := randomBytes(1000 + i)
				if err := s.Put(ctx, key, data); err != nil {
					t.Fatal(err)
				}
				deleteKey(t, s, key)
				if _, err := s.Stat(ctx, key); !errors.Is(err, storage.ErrNotExist) {
					t.Fatalf("Stat after delete: %v", err)
				}
				if err := s.Restore(ctx, storage.Deleted{Key: key, Size: int64(len(data))}); err != nil {
					t.Fatalf("Restore(%q): %v", key, err)
				}
				if got := mustRead(t, s, key); !bytes.Equal(got, data) {
					t.Fatalf("Restore(%q) brought back %d other bytes", key, len(got))
				}
				// Restored once: a second restore finds the object there.
				if err := s.Restore(ctx, storage.Deleted{Key: key, Size: int64(len(data))}); !errors.Is(err, storage.ErrExist) {
					t.Fatalf("second Restore(%q): %v, want ErrExist", key, err)
				}
			}
			// A checksum companion is recorded with Size -1: any size matches.
			const companion = "p/.part-0.parquet.crc"
			if err := s.Put(ctx, companion, []byte("crc-bytes")); err != nil {
				t.Fatal(err)
			}
			deleteKey(t, s, companion)
			if err := s.Restore(ctx, storage.Deleted{Key: companion, Size: -1}); err != nil {
				t.Fatalf("Restore(%q, size -1): %v", companion, err)
			}
			if got := mustRead(t, s, companion); string(got) != "crc-bytes" {
				t.Fatalf("Restore(%q) brought back %q", companion, got)
			}
			if tc.hns {
				for _, src := range f.undeletes {
					if !strings.Contains(src, "?deletionid=") {
						t.Errorf("undelete without a deletion id: %q", src)
					}
				}
			}
		})
	}
}

// A vacuum deletes the directories it empties: on a hierarchical-namespace account the
// directory is created again (through DFS) before the file is undeleted into it.
func TestRestoreHNSIntoDeletedDirectory(t *testing.T) {
	f, srv := newFakeAccount(t)
	f.softDays, f.hns = 7, true
	s := f.store(t, srv)
	ctx := context.Background()
	key := "p=00%3A00/q=é 1/f.parquet"
	data := randomBytes(777)
	if err := s.Put(ctx, key, data); err != nil {
		t.Fatal(err)
	}
	res, err := s.Delete(ctx, []string{key, "p=00%3A00/q=é 1/", "p=00%3A00/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil || r.Gone {
			t.Fatalf("Delete(%q) = %+v", r.Key, r)
		}
	}
	if _, err := s.Stat(ctx, "p=00%3A00/"); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("directory still there: %v", err)
	}
	if err := s.Restore(ctx, storage.Deleted{Key: key, Size: 777}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, s, key); !bytes.Equal(got, data) {
		t.Fatal("restored bytes differ")
	}
	if f.dfsDirs != 1 {
		t.Fatalf("%d directories created through DFS, want 1", f.dfsDirs)
	}
	// A file where the directory was is not replaced, and nothing is undeleted: ErrNotDir,
	// neither ErrExist (nothing is at the key) nor ErrNotExist (the deleted copy is kept).
	if err := s.Put(ctx, "x/y", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if res, _ := s.Delete(ctx, []string{"x/y", "x/"}); res[0].Err != nil || res[1].Err != nil {
		t.Fatalf("Delete: %+v", res)
	}
	if err := s.Put(ctx, "x", []byte("a file")); err != nil {
		t.Fatal(err)
	}
	n := len(f.undeletes)
	if err := s.Restore(ctx, storage.Deleted{Key: "x/y", Size: 1}); !errors.Is(err, storage.ErrNotDir) || errors.Is(err, storage.ErrExist) || errors.Is(err, storage.ErrNotExist) || len(f.undeletes) != n {
		t.Fatalf("Restore under a file: %v, %d undeletes", err, len(f.undeletes)-n)
	}
}

// On a hierarchical-namespace account a path deleted twice is kept twice: the copy of the
// recorded size is the one undeleted.
func TestRestoreHNSPicksTheDeletionOfTheSize(t *testing.T) {
	f, srv := newFakeAccount(t)
	f.softDays, f.hns = 7, true
	s := f.store(t, srv)
	ctx := context.Background()
	key := "p=1/f.parquet"
	first, second := randomBytes(300), randomBytes(500)
	for _, data := range [][]byte{first, second} {
		if err := s.Put(ctx, key, data); err != nil {
			t.Fatal(err)
		}
		deleteKey(t, s, key)
	}
	if err := s.Restore(ctx, storage.Deleted{Key: key, Size: 300}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, s, key); !bytes.Equal(got, first) {
		t.Fatal("restored another deletion of the path")
	}
}

func TestRestoreRefusals(t *testing.T) {
	ctx := context.Background()
	t.Run("newer object at the key", func(t *testing.T) {
		f, srv := newFakeAccount(t)
		f.versioning = true
		s := f.store(t, srv)
		key := recoveryKeys[0]
		if err := s.Put(ctx, key, []byte("old bytes")); err != nil {
			t.Fatal(err)
		}
		deleteKey(t, s, key)
		if err := s.Put(ctx, key, []byte("newer")); err != nil {
			t.Fatal(err)
		}
		if err := s.Restore(ctx, storage.Deleted{Key: key, Size: 9}); !errors.Is(err, storage.ErrExist) {
			t.Fatalf("Restore: %v, want ErrExist", err)
		}
		if got := mustRead(t, s, key); string(got) != "newer" {
			t.Fatalf("the newer object was replaced: %q", got)
		}
	})
	t.Run("written between the check and the copy", func(t *testing.T) {
		f, srv := newFakeAccount(t)
		f.versioning = true
		s := f.store(t, srv)
		key := recoveryKeys[1]
		if err := s.Put(ctx, key, []byte("old bytes")); err != nil {
			t.Fatal(err)
		}
		deleteKey(t, s, key)
		f.beforeCopy = func() {
			f.mu.Lock()
			f.write("tables/t/"+key, []byte("raced"))
			f.mu.Unlock()
		}
		if err := s.Restore(ctx, storage.Deleted{Key: key, Size: 9}); !errors.Is(err, storage.ErrExist) {
			t.Fatalf("Restore: %v, want ErrExist", err)
		}
		if got := mustRead(t, s, key); string(got) != "raced" {
			t.Fatalf("the object written meanwhile was replaced: %q", got)
		}
	})
	for _, tc := range []struct {
		name       string
		softDays   int
		versioning bool
		want       string
	}{
		{"version of another size", 0, true, "none of 10 bytes"},
		{"soft-deleted copy of another size", 7, false, "none of 10 bytes"},
		{"nothing kept", 0, false, "neither soft delete nor versioning"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, srv := newFakeAccount(t)
			f.softDays, f.versioning = tc.softDays, tc.versioning
			s := f.store(t, srv)
			key := recoveryKeys[1]
			if err := s.Put(ctx, key, []byte("nine byte")); err != nil {
				t.Fatal(err)
			}
			deleteKey(t, s, key)
			err := s.Restore(ctx, storage.Deleted{Key: key, Size: 10})
			if !errors.Is(err, storage.ErrNotExist) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), key) {
				t.Fatalf("Restore: %v, want ErrNotExist naming %q and %q", err, key, tc.want)
			}
			if _, err := s.Stat(ctx, key); !errors.Is(err, storage.ErrNotExist) {
				t.Fatalf("a refused restore left an object: %v", err)
			}
		})
	}
	t.Run("undelete that restores nothing", func(t *testing.T) {
		f, srv := newFakeAccount(t)
		f.softDays, f.undeleteNoop = 7, true
		s := f.store(t, srv)
		if err := s.Put(ctx, "a", []byte("x")); err != nil {
			t.Fatal(err)
		}
		deleteKey(t, s, "a")
		if err := s.Restore(ctx, storage.Deleted{Key: "a", Size: 1}); err == nil || errors.Is(err, storage.ErrNotExist) || !strings.Contains(err.Error(), "read back") {
			t.Fatalf("Restore: %v, want an error saying the blob is not there", err)
		}
	})
	for _, tc := range []struct{ name, body string }{
		{"garbage listing", "<EnumerationResults><Blobs><Blob><Name>tables/t/a</Name><Properties><Content-Length>x"},
		{"not a listing", `<?xml version="1.0"?><Error><Code>Oops</Code></Error>`},
		{"repeating marker", `<EnumerationResults><Blobs></Blobs><NextMarker>m</NextMarker></EnumerationResults>`},
		{"undecodable name", `<EnumerationResults><Blobs><Blob><Name Encoded="true">tables/t/%zz</Name><Deleted>true</Deleted><Properties><Content-Length>1</Content-Length></Properties></Blob></Blobs><NextMarker/></EnumerationResults>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, srv := newFakeAccount(t)
			f.softDays, f.listBody = 7, tc.body
			s := f.store(t, srv)
			err := s.Restore(ctx, storage.Deleted{Key: "a", Size: 1})
			if err == nil || errors.Is(err, storage.ErrNotExist) || errors.Is(err, storage.ErrExist) {
				t.Fatalf("Restore: %v, want a listing error", err)
			}
			if len(f.undeletes) != 0 || len(f.blobs) != 0 {
				t.Fatalf("a bad listing led to %d undeletes, %d blobs", len(f.undeletes), len(f.blobs))
			}
		})
	}
	t.Run("encoded name", func(t *testing.T) {
		f, srv := newFakeAccount(t)
		f.softDays = 7
		s := f.store(t, srv)
		if err := s.Put(ctx, "a\x01b", []byte("x")); err != nil {
			t.Fatal(err)
		}
		deleteKey(t, s, "a\x01b")
		f.listBody = `<EnumerationResults><Blobs><Blob><Name Encoded="true">tables/t/a%01b</Name><Deleted>true</Deleted><Properties><Content-Length>1</Content-Length></Properties></Blob></Blobs><NextMarker/></EnumerationResults>`
		if err := s.Restore(ctx, storage.Deleted{Key: "a\x01b", Size: 1}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("keys outside the root", func(t *testing.T) {
		f, srv := newFakeAccount(t)
		s := f.store(t, srv)
		for _, k := range []string{"../t2/a", "/a", "a//b", "./a", "d/", ""} {
			if err := s.Restore(ctx, storage.Deleted{Key: k, Size: 1}); err == nil || errors.Is(err, storage.ErrNotExist) {
				t.Errorf("Restore(%q) = %v, want an invalid-key error", k, err)
			}
		}
	})
}

func TestRecovery(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		softDays    int
		versioning  bool
		oneLake     bool
		propsStatus int
		propsBody   string
		noBlob      bool
		kind        string
		days        int
		detail      string
	}{
		{name: "soft delete", softDays: 9, kind: storage.RecoverySoftDelete, days: 9, detail: "no version id"},
		{name: "versioning", versioning: true, kind: storage.RecoveryVersioning, detail: "has a version id"},
		{name: "versioning and soft delete", versioning: true, softDays: 3, kind: storage.RecoveryVersioning, detail: "3 days"},
		{name: "none", kind: storage.RecoveryNone, detail: "off"},
		{name: "empty store", noBlob: true, kind: storage.RecoveryUnknown, detail: "no blob under the root"},
		{name: "empty store with soft delete", noBlob: true, softDays: 2, kind: storage.RecoverySoftDelete, days: 2},
		{name: "403", propsStatus: 403, kind: storage.RecoveryUnknown, detail: "srt=s"},
		{name: "garbage XML", propsBody: "<StorageServiceProperties><DeleteRetentionPolicy><Enabled>tr", kind: storage.RecoveryUnknown, detail: "unparsable"},
		{name: "another document", propsBody: `<?xml version="1.0"?><Error/>`, kind: storage.RecoveryUnknown, detail: "unparsable"},
		{name: "days out of range", propsBody: "<StorageServiceProperties><DeleteRetentionPolicy><Enabled>true</Enabled><Days>0</Days></DeleteRetentionPolicy></StorageServiceProperties>", kind: storage.RecoveryUnknown, detail: "not 1 to 365"},
		{name: "enabled neither", propsBody: "<StorageServiceProperties><DeleteRetentionPolicy><Enabled>yes</Enabled></DeleteRetentionPolicy></StorageServiceProperties>", kind: storage.RecoveryUnknown, detail: "not true or false"},
		{name: "no policy", propsBody: "<StorageServiceProperties></StorageServiceProperties>", kind: storage.RecoveryNone},
		{name: "OneLake default", oneLake: true, propsStatus: 403, kind: storage.RecoverySoftDelete, days: 7, detail: "Fabric portal"},
		{name: "OneLake garbage", oneLake: true, propsBody: "<<", kind: storage.RecoverySoftDelete, days: 7, detail: "could not be read"},
		{name: "OneLake read", oneLake: true, softDays: 30, kind: storage.RecoverySoftDelete, days: 30},
		{name: "OneLake off", oneLake: true, kind: storage.RecoveryNone, detail: "off"},
		{name: "OneLake without a policy", oneLake: true, propsBody: "<StorageServiceProperties></StorageServiceProperties>", kind: storage.RecoverySoftDelete, days: 7, detail: "by default"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, srv := newFakeAccount(t)
			f.softDays, f.versioning, f.propsStatus, f.propsBody = tc.softDays, tc.versioning, tc.propsStatus, tc.propsBody
			s := f.store(t, srv)
			s.b.rec.oneLake = tc.oneLake
			if !tc.noBlob {
				if err := s.Put(ctx, "_delta_log/00000000000000000000.json", []byte("{}")); err != nil {
					t.Fatal(err)
				}
			}
			r := s.Recovery(ctx)
			if r.Kind != tc.kind || r.Days != tc.days || !strings.Contains(r.Detail, tc.detail) {
				t.Fatalf("Recovery = %+v, want kind %s, %d days, detail with %q", r, tc.kind, tc.days, tc.detail)
			}
		})
	}
}

// The blob examined for versioning is the checkpoint pointer, rewritten at each checkpoint,
// before older commits: versioning turned on after the table was created is seen.
func TestRecoveryExaminesTheCheckpointPointer(t *testing.T) {
	f, srv := newFakeAccount(t)
	s := f.store(t, srv)
	ctx := context.Background()
	if err := s.Put(ctx, "_delta_log/00000000000000000000.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	f.versioning = true
	if err := s.Put(ctx, "_delta_log/_last_checkpoint", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if r := s.Recovery(ctx); r.Kind != storage.RecoveryVersioning || !strings.Contains(r.Detail, "_last_checkpoint") {
		t.Fatalf("Recovery = %+v", r)
	}
}

func TestIsOneLake(t *testing.T) {
	for u, want := range map[string]bool{
		"https://onelake.blob.fabric.microsoft.com":                true,
		"https://westus-onelake.blob.fabric.microsoft.com/":        true,
		"https://ONELAKE.DFS.fabric.microsoft.com":                 true,
		"https://acct.blob.core.windows.net":                       false,
		"https://onelake.blob.fabric.microsoft.com.evil.example":   false,
		"https://evil.example/onelake.blob.fabric.microsoft.com":   false,
		"http://127.0.0.1:10000/devstoreaccount1":                  false,
		"https://onelake.blob.fabric.microsoft.com@evil.example/x": false,
		"::": false,
	} {
		if got := isOneLakeEndpoint(u); got != want {
			t.Errorf("isOneLakeEndpoint(%q) = %v, want %v", u, got, want)
		}
	}
}

func TestCopy(t *testing.T) {
	ctx := context.Background()
	t.Run("pending, then done", func(t *testing.T) {
		f, srv := newFakeAccount(t)
		f.copyPolls = 3
		s := f.store(t, srv)
		data := randomBytes(4096)
		if err := s.Put(ctx, recoveryKeys[0], data); err != nil {
			t.Fatal(err)
		}
		if err := s.Move(ctx, recoveryKeys[0], "_trash/"+recoveryKeys[0]); err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, s, "_trash/"+recoveryKeys[0]); !bytes.Equal(got, data) {
			t.Fatal("moved object differs")
		}
		if _, err := s.Stat(ctx, recoveryKeys[0]); !errors.Is(err, storage.ErrNotExist) {
			t.Fatalf("source after the move: %v", err)
		}
	})
	for _, end := range []string{"failed", "aborted"} {
		t.Run(end, func(t *testing.T) {
			f, srv := newFakeAccount(t)
			f.copyPolls, f.copyEnd = 1, end
			s := f.store(t, srv)
			if err := s.Put(ctx, "a", []byte("data")); err != nil {
				t.Fatal(err)
			}
			err := s.Move(ctx, "a", "b")
			if err == nil || !strings.Contains(err.Error(), end) || !strings.Contains(err.Error(), "destination was deleted") {
				t.Fatalf("Move: %v, want the copy's end and the cleanup", err)
			}
			if _, err := s.Stat(ctx, "b"); !errors.Is(err, storage.ErrNotExist) {
				t.Fatalf("destination of a %s copy left: %v", end, err)
			}
			if got := mustRead(t, s, "a"); string(got) != "data" {
				t.Fatalf("source after a failed move: %q", got)
			}
		})
	}
	// Copy Blob answers success or pending; any other status, or none, is not taken for a copy.
	for _, status := range []string{"-", "failed", "weird"} {
		t.Run("answered "+status, func(t *testing.T) {
			f, srv := newFakeAccount(t)
			f.copyStatus = status
			s := f.store(t, srv)
			if err := s.Put(ctx, "a", []byte("data")); err != nil {
				t.Fatal(err)
			}
			if err := s.Move(ctx, "a", "b"); err == nil || !strings.Contains(err.Error(), "destination was deleted") {
				t.Fatalf("Move: %v, want an error and the destination deleted", err)
			}
			if _, err := s.Stat(ctx, "b"); !errors.Is(err, storage.ErrNotExist) {
				t.Fatalf("destination left: %v", err)
			}
			if got := mustRead(t, s, "a"); string(got) != "data" {
				t.Fatalf("source: %q", got)
			}
		})
	}
	t.Run("cancelled while pending", func(t *testing.T) {
		f, srv := newFakeAccount(t)
		f.copyPolls = 1 << 30
		s := f.store(t, srv)
		s.b.rec.pollBase = 20 * time.Millisecond
		if err := s.Put(ctx, "a", []byte("data")); err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		err := s.Move(cctx, "a", "b")
		if !errors.Is(err, context.DeadlineExceeded) || f.aborts != 1 {
			t.Fatalf("Move = %v with %d aborts, want the deadline and an abort", err, f.aborts)
		}
		if _, err := s.Stat(ctx, "b"); !errors.Is(err, storage.ErrNotExist) {
			t.Fatalf("destination of an abandoned copy left: %v", err)
		}
		if got := mustRead(t, s, "a"); string(got) != "data" {
			t.Fatalf("source: %q", got)
		}
	})
	t.Run("taken and missing", func(t *testing.T) {
		f, srv := newFakeAccount(t)
		s := f.store(t, srv)
		for _, k := range []string{"a", "b"} {
			if err := s.Put(ctx, k, []byte(k)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.b.Copy(ctx, "tables/t/a", "tables/t/b"); !errors.Is(err, storage.ErrExist) {
			t.Fatalf("Copy onto a taken name: %v", err)
		}
		if got := mustRead(t, s, "b"); string(got) != "b" {
			t.Fatalf("destination replaced: %q", got)
		}
		if err := s.b.Copy(ctx, "tables/t/nope", "tables/t/c"); !errors.Is(err, storage.ErrNotExist) {
			t.Fatalf("Copy of a missing source: %v", err)
		}
	})
}

// On a hierarchical-namespace account a move is one DFS rename; elsewhere a copy and a delete.
func TestMoveHNSRenames(t *testing.T) {
	ctx := context.Background()
	f, srv := newFakeAccount(t)
	f.hns = true
	s := f.store(t, srv)
	from, to := recoveryKeys[0], "_trash/run 1/"+recoveryKeys[0]
	data := randomBytes(2048)
	if err := s.Put(ctx, from, data); err != nil {
		t.Fatal(err)
	}
	if err := s.Move(ctx, from, to); err != nil {
		t.Fatal(err)
	}
	if f.renames != 1 {
		t.Fatalf("%d renames, want 1", f.renames)
	}
	if got := mustRead(t, s, to); !bytes.Equal(got, data) {
		t.Fatal("moved bytes differ")
	}
	if _, err := s.Stat(ctx, from); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("source after the rename: %v", err)
	}
	// A taken destination is not replaced, and the source stays.
	if err := s.Put(ctx, from, []byte("again")); err != nil {
		t.Fatal(err)
	}
	if err := s.Move(ctx, from, to); !errors.Is(err, storage.ErrExist) {
		t.Fatalf("Move onto a taken key: %v", err)
	}
	if got := mustRead(t, s, to); !bytes.Equal(got, data) {
		t.Fatal("destination replaced")
	}
	if got := mustRead(t, s, from); string(got) != "again" {
		t.Fatalf("source: %q", got)
	}
	if err := s.Move(ctx, "nope", "_trash/nope"); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("Move of a missing key: %v", err)
	}
	if err := s.Move(ctx, "_trash", "x"); !errors.Is(err, storage.ErrNotExist) || !strings.Contains(err.Error(), "directory") {
		t.Fatalf("Move of a directory: %v", err)
	}
	for _, k := range []string{"../x", "/x", "a//b", "d/", ""} {
		if err := s.Move(ctx, k, "y"); err == nil {
			t.Errorf("Move(%q) accepted", k)
		}
		if err := s.Move(ctx, from, k); err == nil {
			t.Errorf("Move to %q accepted", k)
		}
	}
	if f.renames != 1 {
		t.Fatalf("%d renames after the refusals, want 1", f.renames)
	}
	// A flat account: copy, then delete.
	g, gsrv := newFakeAccount(t)
	fs := g.store(t, gsrv)
	if err := fs.Put(ctx, "a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := fs.Move(ctx, "a", "b/c"); err != nil || g.renames != 0 {
		t.Fatalf("Move on a flat account: %v, %d renames", err, g.renames)
	}
	if got := mustRead(t, fs, "b/c"); string(got) != "x" {
		t.Fatalf("moved: %q", got)
	}
}
