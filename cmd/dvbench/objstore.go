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

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"

	"github.com/deltavacuum/deltavacuum/bench/synthetic"
	"github.com/deltavacuum/deltavacuum/bench/tablegen"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/azure"
	"github.com/deltavacuum/deltavacuum/storage/counting"
	"github.com/deltavacuum/deltavacuum/storage/s3"
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

// benchStore is an object store under test that counts its requests.
type benchStore interface {
	storage.Store
	Requests() counting.RequestCounts
}

// objstoreBackend is what differs between the object stores the benchmark runs on.
type objstoreBackend struct {
	name string
	// open returns a store on prefix with conc requests in flight and d added per request.
	open func(ctx context.Context, prefix string, conc int, d time.Duration) (benchStore, error)
	// create creates the bucket or container when missing.
	create func(ctx context.Context, st benchStore) error
	// pageSize and batchSize are the service's largest list page and delete batch.
	pageSize, batchSize int64
}

func cmdS3(ctx context.Context, args []string) error    { return cmdObjstore(ctx, "s3", args) }
func cmdAzure(ctx context.Context, args []string) error { return cmdObjstore(ctx, "azure", args) }

// cmdObjstore uploads a generated table (empty objects) to an S3 or Azure test server on
// 127.0.0.1 and runs planner + executor (FULL, retention 0) through storage/s3 or
// storage/azure with an added latency per request, at several concurrency settings,
// counting requests. Between runs the deleted objects are uploaded again; at the end the
// prefix is emptied.
func cmdObjstore(ctx context.Context, kind string, args []string) error {
	fs := flag.NewFlagSet(kind, flag.ContinueOnError)
	var endpoint, access, secret, bucket *string
	switch kind {
	case "s3":
		endpoint = fs.String("endpoint", os.Getenv("DELTAVACUUM_TEST_S3_ENDPOINT"), "S3 endpoint on 127.0.0.1 (http)")
		access = fs.String("access-key", os.Getenv("DELTAVACUUM_TEST_S3_ACCESS_KEY_ID"), "access key id")
		secret = fs.String("secret-key", os.Getenv("DELTAVACUUM_TEST_S3_SECRET_ACCESS_KEY"), "secret access key")
		bucket = fs.String("bucket", "dvbench", "bucket (created when missing)")
	case "azure":
		endpoint = fs.String("endpoint", envOr("DELTAVACUUM_TEST_AZURE_ENDPOINT", "http://127.0.0.1:10000/devstoreaccount1"), "Azure Blob endpoint on 127.0.0.1 (http), account path included")
		access = fs.String("account", envOr("DELTAVACUUM_TEST_AZURE_ACCOUNT", "devstoreaccount1"), "storage account")
		secret = fs.String("account-key", os.Getenv("DELTAVACUUM_TEST_AZURE_KEY"), "account key")
		bucket = fs.String("container", "dvbench", "container (created when missing)")
	}
	var posixRoot *string
	if kind == "s3" {
		posixRoot = fs.String("posix-root", "", "lay the data objects down as empty files under this versitygw posix root (the test server's DATA/s3, DATA from .cache/testservers/data-dir) instead of uploading them: a 1 M-object table in a minute")
	}
	delay := fs.Duration("latency", 20*time.Millisecond, "added latency per request")
	concs := fs.String("concurrency", "1,4,16,64,128,256", "concurrency settings (requests in flight)")
	upConc := fs.Int("upload-concurrency", 128, "uploads in flight while the table is written")
	reps := fs.Int("reps", 1, "runs at each concurrency")
	out := fs.String("out", "", "append one JSON line per run to this file")
	label := fs.String("label", kind, "label of the records")
	spec := specFlags(fs)
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if !strings.HasPrefix(*endpoint, "http://127.0.0.1:") {
		return usageError{kind + ": -endpoint must be http://127.0.0.1:PORT… (a local test server)"}
	}
	var be objstoreBackend
	switch kind {
	case "s3":
		be = objstoreBackend{name: "s3", pageSize: 1000, batchSize: 1000,
			open: func(ctx context.Context, prefix string, conc int, d time.Duration) (benchStore, error) {
				cfg := s3.Config{Bucket: *bucket, Prefix: prefix, Region: "us-east-1", Endpoint: *endpoint, PathStyle: true,
					AllowHTTP: true, AccessKeyID: *access, SecretAccessKey: *secret, Concurrency: conc}
				if d > 0 {
					cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return latency{rt, d} }
				}
				return s3.New(ctx, cfg)
			},
			create: func(ctx context.Context, st benchStore) error {
				_, err := st.(*s3.Store).Client().CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: bucket})
				var ae interface{ ErrorCode() string }
				if err != nil && (!errors.As(err, &ae) || (ae.ErrorCode() != "BucketAlreadyOwnedByYou" && ae.ErrorCode() != "BucketAlreadyExists")) {
					return fmt.Errorf("creating bucket %s: %w", *bucket, err)
				}
				return nil
			}}
	case "azure":
		be = objstoreBackend{name: "azure", pageSize: 5000, batchSize: azure.MaxBatch,
			open: func(ctx context.Context, prefix string, conc int, d time.Duration) (benchStore, error) {
				cfg := azure.Config{ServiceURL: *endpoint, Container: *bucket, Prefix: prefix, Account: *access,
					AccountKey: *secret, AllowHTTP: true, Concurrency: conc}
				if d > 0 {
					cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return latency{rt, d} }
				}
				return azure.New(ctx, cfg)
			},
			create: func(ctx context.Context, st benchStore) error {
				_, err := st.(*azure.Store).Client().Create(ctx, nil)
				if err != nil && !bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
					return fmt.Errorf("creating container %s: %w", *bucket, err)
				}
				return nil
			}}
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
	open := func(conc int, d time.Duration) (benchStore, error) { return be.open(ctx, prefix, conc, d) }
	setup, err := open(max(64, *upConc), 0)
	if err != nil {
		return err
	}
	if err := be.create(ctx, setup); err != nil {
		return err
	}
	var onDisk string // the prefix's directory on the server's disk (-posix-root)
	if posixRoot != nil && *posixRoot != "" {
		onDisk = filepath.Join(*posixRoot, *bucket, prefix)
		if fi, err := os.Stat(filepath.Join(*posixRoot, *bucket)); err != nil || !fi.IsDir() {
			return usageError{"s3: -posix-root " + *posixRoot + " has no directory " + *bucket + ": give the root the versitygw posix backend serves (DATA/s3)"}
		}
	}
	defer func() {
		if onDisk != "" {
			_ = os.RemoveAll(onDisk)
			return
		}
		// Empty the prefix.
		var keys []string
		_ = setup.Walk(context.WithoutCancel(ctx), "", func(o storage.Object) error {
			if !o.IsDir {
				keys = append(keys, o.Key)
			}
			return nil
		})
		for i := 0; i < len(keys); i += 1000 {
			_, _ = setup.Delete(context.WithoutCancel(ctx), keys[i:min(i+1000, len(keys))])
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
		g.SetLimit(max(1, *upConc))
		if onDisk != "" {
			// Empty files where versitygw's posix backend keeps the objects: it lists them
			// as objects (no ETag attribute; the planner needs none).
			made := map[string]bool{}
			for _, k := range keys {
				if d := storage.Dir(k); !made[d] {
					if err := os.MkdirAll(filepath.Join(onDisk, filepath.FromSlash(d)), 0o755); err != nil {
						return err
					}
					made[d] = true
				}
			}
			for _, k := range keys {
				g.Go(func() error { return os.WriteFile(filepath.Join(onDisk, filepath.FromSlash(k)), nil, 0o644) })
			}
			return g.Wait()
		}
		for _, k := range keys {
			g.Go(func() error { return setup.Put(gctx, k, nil) })
		}
		return g.Wait()
	}
	if err := upload(data); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "dvbench %s: uploaded %d objects to %s/%s in %.0fs\n", kind, len(data)+len(ents), *bucket, prefix, time.Since(start).Seconds())

	// The floor: one list page per pageSize entries of each directory (delimited listing),
	// one batch delete per batchSize stale keys.
	perDir := map[string]int64{}
	for _, k := range data {
		perDir[storage.Dir(k)]++
	}
	perDir[""] += int64(max(1, t.Partitions)) + 1 // partition prefixes and _delta_log/
	floorList := int64(1)                         // _delta_log/
	for _, n := range perDir {
		floorList += (n + be.pageSize - 1) / be.pageSize
	}
	floorDelete := (t.Stale() + be.batchSize - 1) / be.batchSize

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
			r := record{Label: *label, Case: fmt.Sprintf("%s-c%d", kind, c), Rep: rep, Live: t.Live, Stale: t.Stale(), Partitions: t.Partitions}
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
			fmt.Fprintf(os.Stderr, "dvbench %s: concurrency %3d: plan %6.2fs execute %6.2fs, requests list %d (floor %d) get %d put %d delete %d (floor %d), deleted %d\n",
				kind, c, t1.Sub(t0).Seconds(), t2.Sub(t1).Seconds(), reqAll.List, floorList, reqAll.Get, reqAll.Put, reqAll.Delete, floorDelete, res.NumDeletedFiles)
			// Put back what was deleted, and the log as generated.
			var back []string
			if err := plan.Files.Each(func(f vacuum.File) error { back = append(back, f.Path); return nil }); err != nil {
				return err
			}
			if err := upload(back); err != nil {
				return err
			}
			_, _ = setup.Delete(ctx, []string{deltalog.LastVacuumInfoKey})
		}
	}
	return nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
