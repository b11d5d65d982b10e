package adversarial

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/cli"
	dvrun "github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/storage/location"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// The lock tests start real runs of one table together, through every front end (the CLI's
// vacuum, its sql VACUUM, the library, shards of different counts), and check that no two of
// them ever hold the table at once: the one-run rule is a lock taken with the store's
// put-if-absent before planning, not a check (on the main of 2026-12-01 a second run started
// a second after the first was not refused). They kill runs with SIGKILL at random moments and
// check that the next run on the same host takes the table at once.

// lockTable is a table to race on: live files, and stray ones old enough to delete.
type lockTable struct {
	store storage.Store
	uri   string
	opts  location.Options // storage options of the CLI and the library
	flags []string         // the same as --storage-option flags
	live  []string
}

func seedLockTable(t *testing.T, store storage.Store, strays int) []string {
	t.Helper()
	ctx := context.Background()
	actions := []any{
		map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
		map[string]any{"metaData": map[string]any{"id": "lock", "format": map[string]any{"provider": "parquet", "options": map[string]string{}},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{}, "createdTime": 0}},
	}
	var live []string
	for i := range 3 {
		key := fmt.Sprintf("live-%d.parquet", i)
		live = append(live, key)
		actions = append(actions, map[string]any{"add": map[string]any{"path": key, "size": 4, "modificationTime": 0, "dataChange": true, "partitionValues": map[string]string{}}})
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	errs := make(chan error, strays+len(live))
	for i := range strays + len(live) {
		key := fmt.Sprintf("stray-%04d.parquet", i)
		if i >= strays {
			key = live[i-strays]
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := store.Put(ctx, key, []byte("data")); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := deltalog.WriteCommit(ctx, store, 0, actions); err != nil {
		t.Fatal(err)
	}
	return live
}

// contender is one real run of the race: ok when it ran, with the interval it held the table
// in (at most: from its call to its return).
type contender struct {
	name       string
	ok         bool
	refused    bool
	begin, end time.Time
	detail     string
}

// contenders are the runs of one round, by front end.
func contenders(lt *lockTable, version int64) map[string]func(ctx context.Context) (ok, refused bool, detail string) {
	zero := 0.0
	cliRun := func(args ...string) func(ctx context.Context) (bool, bool, string) {
		return func(ctx context.Context) (bool, bool, string) {
			code, _, stderr := runQuiet(append(args, lt.flags...)...)
			return code == 0, code != 0 && strings.Contains(stderr, "deltavacuum unlock"), stderr
		}
	}
	lib := func(shard *vacuum.Shard) func(ctx context.Context) (bool, bool, string) {
		return func(ctx context.Context) (bool, bool, string) {
			tbl, err := deltavacuum.OpenWith(ctx, lt.uri, lt.opts)
			if err != nil {
				return false, false, err.Error()
			}
			o := deltavacuum.VacuumOptions{Options: vacuum.Options{RetainHours: &zero, DisableRetentionCheck: true}}
			if shard != nil {
				o.Shard, o.Version = shard, &version
			}
			_, err = tbl.Vacuum(ctx, o)
			if err != nil {
				return false, isLocked(err), err.Error()
			}
			return true, false, ""
		}
	}
	return map[string]func(ctx context.Context) (bool, bool, string){
		"cli vacuum":   cliRun("vacuum", lt.uri, "--retain-hours", "0", "--conf", checkOff),
		"cli vacuum 2": cliRun("vacuum", lt.uri, "--retain-hours", "0", "--conf", checkOff, "--json"),
		"cli sql":      cliRun("sql", "VACUUM '"+lt.uri+"' RETAIN 0 HOURS", "--conf", checkOff),
		"library":      lib(nil),
		"shard 0/2":    lib(&vacuum.Shard{Index: 0, Count: 2}),
		"shard 1/3":    lib(&vacuum.Shard{Index: 1, Count: 3}),
	}
}

func isLocked(err error) bool {
	return errors.Is(err, dvrun.ErrLocked) && strings.Contains(err.Error(), "deltavacuum unlock")
}

// runQuiet is run without a testing.TB (from goroutines).
func runQuiet(args ...string) (int, string, string) {
	var out, errb strings.Builder
	code := cli.Run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// lockRounds starts every contender of each round at one instant and checks that the runs that
// went through never held the table at the same time, and that every refusal named the holder
// and unlock.
func lockRounds(t *testing.T, rounds, strays int, newTable func(t *testing.T) *lockTable) {
	totalRefused := 0
	for round := range rounds {
		t.Run(fmt.Sprintf("round%02d", round), func(t *testing.T) {
			lt := newTable(t)
			lt.live = seedLockTable(t, lt.store, strays)
			start := make(chan struct{})
			var mu sync.Mutex
			var got []contender
			var wg sync.WaitGroup
			for name, f := range contenders(lt, 0) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					c := contender{name: name, begin: time.Now()}
					c.ok, c.refused, c.detail = f(context.Background())
					c.end = time.Now()
					mu.Lock()
					got = append(got, c)
					mu.Unlock()
				}()
			}
			close(start)
			wg.Wait()
			var won []contender
			for _, c := range got {
				switch {
				case c.ok:
					won = append(won, c)
				case c.refused:
					totalRefused++
				default:
					t.Errorf("%s failed, not for the lock: %s", c.name, c.detail)
				}
			}
			if len(won) == 0 {
				t.Fatalf("no run went through: %+v", got)
			}
			for i, a := range won {
				for _, b := range won[i+1:] {
					if a.begin.Before(b.end) && b.begin.Before(a.end) {
						t.Errorf("%s and %s ran at the same time (%s-%s and %s-%s)", a.name, b.name,
							a.begin.Format("15:04:05.000"), a.end.Format("15:04:05.000"), b.begin.Format("15:04:05.000"), b.end.Format("15:04:05.000"))
					}
				}
			}
			for _, k := range lt.live {
				if _, err := lt.store.Stat(context.Background(), k); err != nil {
					t.Errorf("live file %s: %v", k, err)
				}
			}
			rep, err := dvrun.Unlock(context.Background(), lt.store, dvrun.UnlockOptions{DryRun: true})
			if err != nil || len(rep.Tickets) != 0 {
				t.Errorf("open tickets after the round: %+v %v", rep, err)
			}
		})
		if t.Failed() {
			return
		}
	}
	if totalRefused == 0 {
		t.Error("no run was ever refused: the rounds did not race")
	}
	t.Logf("%d rounds, %d runs refused while another held the table", rounds, totalRefused)
}

func TestOneRunAtATimeLocal(t *testing.T) {
	rounds := 8
	if testing.Short() {
		rounds = 2
	}
	lockRounds(t, rounds, 3000, func(t *testing.T) *lockTable {
		dir := t.TempDir()
		st, err := local.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		return &lockTable{store: st, uri: dir}
	})
}

func TestOneRunAtATimeS3(t *testing.T) {
	if os.Getenv(storagetest.EnvS3Endpoint) == "" && os.Getenv("CI") != "true" {
		t.Skip("S3 test server not configured (" + storagetest.EnvS3Endpoint + "); run scripts/testservers/start.sh and source .cache/testservers.env")
	}
	rounds := 3
	if testing.Short() {
		rounds = 1
	}
	lockRounds(t, rounds, 1500, func(t *testing.T) *lockTable {
		c := storagetest.S3Config(t)
		opts := location.Options{"aws_endpoint": c.Endpoint, "aws_allow_http": "true", "aws_access_key_id": c.AccessKeyID,
			"aws_secret_access_key": c.SecretAccessKey, "aws_region": c.Region}
		var flags []string
		for k, v := range opts {
			flags = append(flags, "--storage-option", k+"="+v)
		}
		return &lockTable{store: storagetest.NewS3Config(t, c), uri: "s3://" + c.Bucket + "/" + c.Prefix, opts: opts, flags: flags}
	})
}

// Environment of the child process of TestKilledRunsRerunAtOnce (this test binary run again).
const envLockChild = "DELTAVACUUM_LOCK_CHILD" // the CLI's arguments, as JSON

// TestLockChildProcess is not a test: it is the process TestKilledRunsRerunAtOnce starts and
// kills, this test binary run again with DELTAVACUUM_LOCK_CHILD set. It runs the CLI.
func TestLockChildProcess(t *testing.T) {
	spec := os.Getenv(envLockChild)
	if spec == "" {
		t.Skip("the child process of the kill tests; they start it")
	}
	var args []string
	if err := json.Unmarshal([]byte(spec), &args); err != nil {
		fmt.Println("child failed:", err)
		os.Exit(1)
	}
	code, _, _ := runQuiet(args...)
	os.Exit(code)
}

// TestKilledRunsRerunAtOnce: a run killed with SIGKILL at a random moment (before it takes the
// table, while it plans, while it deletes, after it ends) leaves at most a ticket of a process
// that is gone; the next run on the same host takes the table at once (no 15 minutes wait),
// completes, and says what it took over.
func TestKilledRunsRerunAtOnce(t *testing.T) {
	if dvrun.Self().Boot == "" {
		t.Skip("this system does not identify its boot: a dead holder's ticket goes stale by its heartbeat only")
	}
	runs := 40
	if testing.Short() {
		runs = 8
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	killedHolding := 0
	for i := range runs {
		dir := t.TempDir()
		st, err := local.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		live := seedLockTable(t, st, 400+rng.IntN(800))
		args, _ := json.Marshal([]string{"vacuum", dir, "--retain-hours", "0", "--conf", checkOff})
		cmd := exec.Command(os.Args[0], "-test.run=^TestLockChildProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), envLockChild+"="+string(args))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		open, err := dvrun.Unlock(context.Background(), st, dvrun.UnlockOptions{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(open.Tickets) > 0 {
			killedHolding++
			if s := open.Tickets[0].State; s != dvrun.StateGone {
				t.Errorf("run %d: the killed process's ticket is %s, want gone", i, s)
			}
		}
		code, stdout, stderr := run(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff, "--json")
		if code != 0 {
			t.Fatalf("run %d: the rerun after a kill failed (exit %d): %s", i, code, stderr)
		}
		if len(open.Tickets) > 0 && !strings.Contains(stdout, "was released") {
			t.Errorf("run %d: the rerun took over the killed run's ticket without saying so: %s", i, stdout)
		}
		for _, k := range live {
			if _, err := os.Stat(filepath.Join(dir, k)); err != nil {
				t.Errorf("run %d: live file %s: %v", i, k, err)
			}
		}
	}
	t.Logf("%d runs killed at random moments, %d of them while holding the table; every rerun completed at once", runs, killedHolding)
	if killedHolding == 0 {
		t.Error("no run was killed while it held the table: the test showed nothing")
	}
}
