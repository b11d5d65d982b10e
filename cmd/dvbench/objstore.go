package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"

	"github.com/deltavacuum/deltavacuum/bench/tablegen"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/s3"
	"github.com/deltavacuum/deltavacuum/storage/synthetic"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// latency delays every request by d before sending it: a remote object store's round trip.
type latency struct {
	base http.RoundTripper
	d    time.Duration
}

func (l latency) RoundTrip(r *http.Request) (*http.Response, error) {
	t := time.NewTimer(l.d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	return l.base.RoundTrip(r)
}

// cmdS3 uploads a generated table (empty objects) to an S3-compatible server on 127.0.0.1 and
// runs planner + executor (FULL, retention 0) through storage/s3 with an added latency per
// request, at several concurrency settings, counting requests. Between runs the deleted
// objects are uploaded again; at the end the prefix is emptied.
func cmdS3(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("s3", flag.ContinueOnError)
	endpoint := fs.String("endpoint", os.Getenv("DELTAVACUUM_TEST_S3_ENDPOINT"), "S3 endpoint on 127.0.0.1 (http)")
	access := fs.String("access-key", os.Getenv("DELTAVACUUM_TEST_S3_ACCESS_KEY_ID"), "access key id")
	secret := fs.String("secret-key", os.Getenv("DELTAVACUUM_TEST_S3_SECRET_ACCESS_KEY"), "secret access key")
	bucket := fs.String("bucket", "dvbench", "bucket (created when missing)")
	delay := fs.Duration("latency", 20*time.Millisecond, "added latency per request")
	concs := fs.String("concurrency", "1,4,16,64", "concurrency settings (requests in flight)")
	reps := fs.Int("reps", 1, "runs at each concurrency")
	out := fs.String("out", "", "append one JSON line per run to this file")
	label := fs.String("label", "s3", "label of the records")
	spec := specFlags(fs)
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if !strings.HasPrefix(*endpoint, "http://127.0.0.1:") {
		return usageError{"s3: -endpoint must be http://127.0.0.1:PORT (a local test server)"}
	}
	t, err := tablegen.New(*spec)
	if err != nil {
		return err
	}
	var levels []int
	for _, c := range strings.Split(*concs, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 {
			return usageError{"s3: bad -concurrency " + *concs}
		}
		levels = append(levels, n)
	}
	rnd := make([]byte, 4)
	rand.Read(rnd)
	prefix := "dvbench-" + hex.EncodeToString(rnd)
	open := func(conc int, d time.Duration) (*s3.Store, error) {
		cfg := s3.Config{Bucket: *bucket, Prefix: prefix, Region: "us-east-1", Endpoint: *endpoint, PathStyle: true,
			AllowHTTP: true, AccessKeyID: *access, SecretAccessKey: *secret, Concurrency: conc}
		if d > 0 {
			cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return latency{rt, d} }
		}
		return s3.New(ctx, cfg)
	}
	setup, err := open(64, 0)
	if err != nil {
		return err
	}
	if _, err := setup.Client().CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: bucket}); err != nil {
		var ae interface{ ErrorCode() string }
		if !errors.As(err, &ae) || (ae.ErrorCode() != "BucketAlreadyOwnedByYou" && ae.ErrorCode() != "BucketAlreadyExists") {
			return fmt.Errorf("creating bucket %s: %w", *bucket, err)
		}
	}
	defer func() {
		// Empty the prefix.
		var keys []string
		_ = setup.Walk(context.WithoutCancel(ctx), "", func(o storage.Object) error {
			if !o.IsDir {
				keys = append(keys, o.Key)
			}
			return nil
		})
		for i := 0; i < len(keys); i += 1000 {
			setup.Delete(context.WithoutCancel(ctx), keys[i:min(i+1000, len(keys))])
		}
	}()

	// The log, generated into a temporary directory, then the data objects.
	tmp, err := os.MkdirTemp("", "dvbench-s3-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	syn, err := synthetic.Create(t, tmp)
	if err != nil {
		return err
	}
	start := time.Now()
	ents, err := os.ReadDir(filepath.Join(tmp, "_delta_log"))
	if err != nil {
		return err
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(tmp, "_delta_log", e.Name()))
		if err != nil {
			return err
		}
		if err := setup.Put(ctx, deltalog.LogDir+e.Name(), b); err != nil {
			return err
		}
	}
	var data []string
	err = syn.Walk(ctx, "", func(o storage.Object) error {
		if o.IsDir {
			if o.Key == deltalog.LogDir {
				return storage.SkipDir
			}
			return nil
		}
		data = append(data, o.Key)
		return nil
	})
	if err != nil {
		return err
	}
	upload := func(keys []string) error {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(64)
		for _, k := range keys {
			g.Go(func() error { return setup.Put(gctx, k, nil) })
		}
		return g.Wait()
	}
	if err := upload(data); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "dvbench s3: uploaded %d objects to %s/%s in %.0fs\n", len(data)+len(ents), *bucket, prefix, time.Since(start).Seconds())

	// The floor: one list page per 1000 entries of each directory (delimited listing), the
	// log's reads as the planner makes them, one batch delete per 1000 stale keys.
	perDir := map[string]int64{}
	for _, k := range data {
		perDir[storage.Dir(k)]++
	}
	perDir[""] += int64(max(1, t.Partitions)) + 1 // partition prefixes and _delta_log/
	floorList := int64(1)                         // _delta_log/
	for _, n := range perDir {
		floorList += (n + 999) / 1000
	}
	floorDelete := (t.Stale() + 999) / 1000

	var sink io.Writer = io.Discard
	if *out != "" {
		f, err := os.OpenFile(*out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		sink = f
	}
	zero := 0.0
	for rep := 1; rep <= *reps; rep++ {
		for _, c := range levels {
			st, err := open(c, *delay)
			if err != nil {
				return err
			}
			r := record{Label: *label, Case: fmt.Sprintf("s3-c%d", c), Rep: rep, Live: t.Live, Stale: t.Stale(), Partitions: t.Partitions}
			t0 := time.Now()
			pl, err := vacuum.NewPlanner(ctx, st, vacuum.Options{RetainHours: &zero, DisableRetentionCheck: true})
			if err != nil {
				return err
			}
			plan, err := pl.Plan(ctx)
			if err != nil {
				return err
			}
			t1 := time.Now()
			reqPlan := st.Requests()
			res, err := vacuum.Execute(ctx, st, plan, vacuum.ExecOptions{Concurrency: c})
			if err != nil {
				return err
			}
			t2 := time.Now()
			reqAll := st.Requests()
			reqExec := reqAll.Sub(reqPlan)
			r.WallSeconds = t2.Sub(t0).Seconds()
			r.Files = res.NumDeletedFiles
			r.Inner = map[string]any{
				"latencyMs": delay.Milliseconds(), "concurrency": c,
				"planSeconds": t1.Sub(t0).Seconds(), "executeSeconds": t2.Sub(t1).Seconds(),
				"requestsPlan": reqPlan, "requestsExecute": reqExec, "requests": reqAll,
				"floorList": floorList, "floorDelete": floorDelete,
			}
			r.Time = time.Now().UTC()
			b, _ := json.Marshal(r)
			fmt.Fprintln(sink, string(b))
			fmt.Fprintf(os.Stderr, "dvbench s3: concurrency %3d: plan %6.2fs execute %6.2fs, requests list %d (floor %d) get %d put %d delete %d (floor %d), deleted %d\n",
				c, t1.Sub(t0).Seconds(), t2.Sub(t1).Seconds(), reqAll.List, floorList, reqAll.Get, reqAll.Put, reqAll.Delete, floorDelete, res.NumDeletedFiles)
			// Put back what was deleted, and the log as generated.
			var back []string
			for _, f := range plan.Files {
				back = append(back, f.Path)
			}
			if err := upload(back); err != nil {
				return err
			}
			_, _ = setup.Delete(ctx, []string{deltalog.LastVacuumInfoKey})
		}
	}
	return nil
}
