package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/checkpointwriter"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/azure"
	"github.com/deltavacuum/deltavacuum/storage/counting"
	"github.com/deltavacuum/deltavacuum/storage/gcs"
	"github.com/deltavacuum/deltavacuum/storage/s3"
)

// listingLayout is the table of a listing benchmark: commits in _delta_log/ (a checkpoint at
// the last one holds every live file), live files in date= (or date=/hour=) folders, and
// untracked (stale) files beside them.
type listingLayout struct {
	Folders, Hours, Files, Commits int
	Stale                          float64 // stale files per live file
}

func (l listingLayout) leafDirs() []string {
	var dirs []string
	for d := range l.Folders {
		date := "date=" + time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d).Format(time.DateOnly) + "/"
		if l.Hours == 0 {
			dirs = append(dirs, date)
			continue
		}
		for h := range l.Hours {
			dirs = append(dirs, fmt.Sprintf("%shour=%02d/", date, h))
		}
	}
	return dirs
}

// files returns the live and the stale data keys.
func (l listingLayout) files() (live, stale []string) {
	perDir := int(float64(l.Files) * l.Stale)
	for i, d := range l.leafDirs() {
		for f := range l.Files {
			live = append(live, fmt.Sprintf("%spart-%05d-%08x-5c1e-4b7a-9d2f-%012x.c000.snappy.parquet", d, f, i, f))
		}
		for f := range perDir {
			stale = append(stale, fmt.Sprintf("%spart-%05d-%08x-0bad-4b7a-9d2f-%012x.c000.snappy.parquet", d, l.Files+f, i, f))
		}
	}
	return live, stale
}

// log returns the files of _delta_log/ (key, content).
func (l listingLayout) log(live []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	cols := []string{"date"}
	if l.Hours > 0 {
		cols = append(cols, "hour")
	}
	created := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	proto := &deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	meta := &deltalog.Metadata{ID: "5c1e0bad-4b7a-4d2f-9d2f-000000000001", Format: deltalog.Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString:     `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"date","type":"string","nullable":true,"metadata":{}},{"name":"hour","type":"string","nullable":true,"metadata":{}}]}`,
		PartitionColumns: cols, Configuration: map[string]string{}, CreatedTime: &created}
	last := int64(max(l.Commits, 2) - 1)
	for v := range last + 1 {
		var b []byte
		if v == 0 {
			p, _ := json.Marshal(map[string]any{"protocol": proto})
			m, _ := json.Marshal(map[string]any{"metaData": meta})
			b = append(append(append(p, '\n'), m...), '\n')
		} else {
			b = fmt.Appendf(nil, `{"commitInfo":{"timestamp":%d,"operation":"WRITE"}}`+"\n", created+v)
		}
		out[deltalog.CommitKey(v)] = b
	}
	rows := func(yield func(*deltalog.Action) bool) {
		if !yield(&deltalog.Action{Protocol: proto}) || !yield(&deltalog.Action{Metadata: meta}) {
			return
		}
		for _, k := range live {
			pv := map[string]string{}
			for _, c := range strings.Split(storage.Dir(k), "/") {
				if name, val, ok := strings.Cut(c, "="); ok {
					pv[name] = val
				}
			}
			if !yield(&deltalog.Action{Add: &deltalog.Add{Path: k, Size: 1 << 20, ModificationTime: created, DataChange: true, PartitionValues: pv}}) {
				return
			}
		}
	}
	var buf bytes.Buffer
	if err := checkpointwriter.Write(&buf, iter.Seq[*deltalog.Action](rows)); err != nil {
		return nil, err
	}
	out[fmt.Sprintf("%s%020d.checkpoint.parquet", deltalog.LogDir, last)] = buf.Bytes()
	out[deltalog.LogDir+"_last_checkpoint"] = fmt.Appendf(nil, `{"version":%d,"size":%d}`+"\n", last, len(live)+2)
	return out, nil
}

// proxyCounts are the requests a counting proxy forwarded, by kind.
type proxyCounts struct {
	List, Head, Get, Put, BatchDelete, Delete, Other int64
}

// countingProxy forwards to a test server, after a delay, and counts what it forwards.
type countingProxy struct {
	delay time.Duration
	mu    sync.Mutex
	c     proxyCounts
	ln    net.Listener
	srv   *http.Server
}

func startProxy(target string, delay time.Duration) (*countingProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	p := &countingProxy{delay: delay}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(&url.URL{Scheme: u.Scheme, Host: u.Host})
			r.Out.URL.Path, r.Out.URL.RawPath = r.In.URL.Path, r.In.URL.RawPath
			r.Out.Host = r.In.Host // signed requests (SigV4) name the host the client saw
		},
		Transport: &http.Transport{MaxIdleConnsPerHost: 512, MaxIdleConns: 1024},
	}
	p.ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	trace := os.Getenv("DVBENCH_PROXY_TRACE") != "" // each request on stderr
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.count(r)
		if trace {
			fmt.Fprintln(os.Stderr, "proxy:", r.Method, r.URL.RequestURI())
		}
		if p.delay > 0 {
			time.Sleep(p.delay)
		}
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = p.srv.Serve(p.ln) }() // ErrServerClosed once the benchmark closes it
	return p, nil
}

func (p *countingProxy) count(r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch k := counting.Classify(r); {
	case k == counting.List:
		p.c.List++
	case r.Method == http.MethodHead:
		p.c.Head++
	case k == counting.Get:
		p.c.Get++
	case k == counting.Put:
		p.c.Put++
	case k == counting.Delete && r.Method == http.MethodPost:
		p.c.BatchDelete++
	case k == counting.Delete:
		p.c.Delete++
	default:
		p.c.Other++
	}
}

func (p *countingProxy) take() proxyCounts {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.c
	p.c = proxyCounts{}
	return c
}

func (p *countingProxy) endpoint() string { return "http://" + p.ln.Addr().String() }

// cmdListing measures what listing a table costs on an object-store test server: deltavacuum
// (this build and an older one, -old) and delta-rs, each a child process sending its requests
// through a loopback proxy that counts them by kind and adds -latency to each. Cases: dv-dry,
// old-dry, deltars-dry (plans), dv-full, old-full, deltars-full (real runs; the stale files
// are put back after each).
func cmdListing(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("listing", flag.ContinueOnError)
	kind := fs.String("store", "s3", "s3, gcs or azure (the test servers of scripts/testservers/start.sh)")
	var lay listingLayout
	fs.IntVar(&lay.Folders, "folders", 100, "partition folders (dates)")
	fs.IntVar(&lay.Hours, "hours", 0, "hour= folders in each date folder (0: one level)")
	fs.IntVar(&lay.Files, "files", 60, "live files per leaf folder")
	fs.IntVar(&lay.Commits, "commits", 20, "commits in _delta_log/ (a checkpoint at the last)")
	fs.Float64Var(&lay.Stale, "stale", 0.2, "stale (untracked) files per live file")
	delay := fs.Duration("latency", 20*time.Millisecond, "added latency per request (at the proxy)")
	reps := fs.Int("reps", 1, "runs of each case")
	cases := fs.String("cases", "dv-dry,old-dry,deltars-dry,dv-full,old-full,deltars-full", "cases, run in this order at each rep")
	newBin := fs.String("new", "bin/deltavacuum", "deltavacuum binary under test")
	oldBin := fs.String("old", ".cache/deltavacuum-old", "deltavacuum binary to compare with (old-* cases)")
	python := fs.String("python", ".cache/bench-venv/bin/python", "Python with deltalake (deltars-* cases)")
	deltars := fs.String("deltars", "bench/deltars_vacuum.py", "delta-rs script")
	conc := fs.String("concurrency", "", "deltavacuum's storage option concurrency (empty: its default); a comma list runs the dv-* and old-* cases at each, on one upload")
	batchSize := fs.Int("batch-size", 0, "deltavacuum's storage option delete_batch_size, keys per delete request (0: the store's default), for the dv-* and old-* cases")
	posixRoot := fs.String("posix-root", "", "S3: lay the objects down under versitygw's posix root (DATA/s3) instead of uploading them")
	out := fs.String("out", "", "append one JSON line per run to this file")
	label := fs.String("label", "", "label of the records")
	keep := fs.Bool("keep", false, "keep the table on the server (its prefix is printed)")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	levels, err := concurrencyLevels(*conc)
	if err != nil {
		return err
	}
	if *batchSize < 0 {
		return usageError{fmt.Sprintf("listing: -batch-size %d: a number of keys per delete request, 0 for the store's default", *batchSize)}
	}
	rnd := make([]byte, 4)
	rand.Read(rnd)
	prefix := "dvlist-" + hex.EncodeToString(rnd)
	srv, err := openListingServer(ctx, *kind, prefix)
	if err != nil {
		return err
	}
	live, stale := lay.files()
	logFiles, err := lay.log(live)
	if err != nil {
		return err
	}
	start := time.Now()
	put := func(keys []string, content map[string][]byte) error {
		if *posixRoot != "" && *kind == "s3" {
			return layDown(filepath.Join(*posixRoot, srv.bucket, prefix), keys, content)
		}
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(64)
		for _, k := range keys {
			g.Go(func() error { return srv.store.Put(gctx, k, content[k]) })
		}
		return g.Wait()
	}
	var logKeys []string
	for k := range logFiles {
		logKeys = append(logKeys, k)
	}
	if err := put(logKeys, logFiles); err != nil {
		return err
	}
	if err := put(append(append([]string(nil), live...), stale...), nil); err != nil {
		return err
	}
	if !*keep {
		defer func() {
			if *posixRoot != "" && *kind == "s3" {
				_ = os.RemoveAll(filepath.Join(*posixRoot, srv.bucket, prefix))
				return
			}
			var keys []string
			_ = srv.store.Walk(context.WithoutCancel(ctx), "", func(o storage.Object) error {
				if !o.IsDir {
					keys = append(keys, o.Key)
				}
				return nil
			})
			for i := 0; i < len(keys); i += 256 {
				_, _ = srv.store.Delete(context.WithoutCancel(ctx), keys[i:min(i+256, len(keys))])
			}
		}()
	}
	objects := len(logFiles) + len(live) + len(stale)
	fmt.Fprintf(os.Stderr, "dvbench listing: %s/%s: %d objects (%d in _delta_log/, %d live, %d stale, %d leaf folders) in %.0fs\n",
		srv.bucket, prefix, objects, len(logFiles), len(live), len(stale), len(lay.leafDirs()), time.Since(start).Seconds())

	proxy, err := startProxy(srv.endpoint, *delay)
	if err != nil {
		return err
	}
	defer proxy.srv.Close()
	var sink io.Writer = io.Discard
	if *out != "" {
		f, err := os.OpenFile(*out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		sink = f
	}
	page := srv.pageSize
	floor := map[string]int64{
		"flat":     int64((objects + page - 1) / page),                             // every object, one listing
		"data":     int64((len(live) + len(stale) + page - 1) / page),              // the data, without the log
		"log":      int64((len(logFiles) + page - 1) / page),                       // _delta_log/ alone
		"batches":  int64((len(stale) + srv.batchSize - 1) / srv.batchSize),        // delete requests
		"folders":  int64(len(lay.leafDirs()) + lay.Folders*min(lay.Hours, 1) + 2), // folder by folder: each, the root, _delta_log/
		"pageSize": int64(page),
	}
	// runCase runs case c (at the storage option concurrency level, "" for the default) once,
	// records it, and puts back what a real run deleted.
	runCase := func(rep int, level, c string) error {
		dry := strings.HasSuffix(c, "-dry")
		var name string
		var cargs []string
		var env []string
		switch {
		case strings.HasPrefix(c, "dv-"), strings.HasPrefix(c, "old-"):
			name = *newBin
			if strings.HasPrefix(c, "old-") {
				name = *oldBin
			}
			cargs = append([]string{"vacuum", srv.uri, "--retain-hours", "0", "--conf", "spark.databricks.delta.retentionDurationCheck.enabled=false",
				"--json", "--progress", "none"}, srv.dvOptions(proxy.endpoint())...)
			if level != "" {
				cargs = append(cargs, "--storage-option", "concurrency="+level)
			}
			if *batchSize > 0 {
				cargs = append(cargs, "--storage-option", "delete_batch_size="+strconv.Itoa(*batchSize))
			}
			if dry {
				cargs = append(cargs, "--dry-run")
			}
			env = srv.env
		case strings.HasPrefix(c, "deltars-"):
			name = *python
			cargs = []string{*deltars, srv.deltarsURI}
			if dry {
				cargs = append(cargs, "--dry-run")
			}
			env = srv.deltarsEnv(proxy.endpoint())
		default:
			return usageError{"listing: unknown case " + c}
		}
		proxy.take()
		var stdout bytes.Buffer
		st, err := runChildEnv(ctx, "", env, &stdout, name, cargs...)
		counts := proxy.take()
		r := record{Label: *label, Case: c, Rep: rep, Live: int64(len(live)), Stale: int64(len(stale)), Partitions: len(lay.leafDirs()),
			WallSeconds: st.Wall.Seconds(), MaxRSSMiB: float64(st.MaxRSSKB) / 1024, UserSeconds: st.User.Seconds(), SysSeconds: st.Sys.Seconds(), Files: -1,
			Inner: map[string]any{"store": *kind, "latencyMs": delay.Milliseconds(), "layout": lay, "objects": objects, "logObjects": len(logFiles),
				"requests": counts, "floor": floor, "concurrency": level, "batchSize": *batchSize}, Time: time.Now().UTC()}
		if err != nil {
			r.Error = err.Error()
		}
		r.Files = filesOf(stdout.Bytes())
		b, _ := json.Marshal(r)
		fmt.Fprintln(sink, string(b))
		fmt.Fprintf(os.Stderr, "dvbench listing %s %-13s c=%-3s wall %6.2fs cpu %6.2fs  list %4d head %4d get %4d put %3d batch-delete %3d delete %4d  files %d%s\n",
			*kind, c, level, st.Wall.Seconds(), (st.User + st.Sys).Seconds(), counts.List, counts.Head, counts.Get, counts.Put, counts.BatchDelete, counts.Delete, r.Files, errSuffix(err))
		if !dry {
			// Put back the stale files, and the log as laid out.
			if err := put(stale, nil); err != nil {
				return err
			}
			if err := srv.resetLog(ctx, logFiles); err != nil {
				return err
			}
		}
		return nil
	}
	for rep := 1; rep <= *reps; rep++ {
		for i, level := range levels {
			for _, c := range strings.Split(*cases, ",") {
				c = strings.TrimSpace(c)
				if i > 0 && strings.HasPrefix(c, "deltars-") {
					continue // delta-rs has no such setting: measured once a rep
				}
				if err := runCase(rep, level, c); err != nil {
					return err
				}
			}
		}
	}
	if *keep {
		fmt.Fprintf(os.Stderr, "dvbench listing: kept %s\n", srv.uri)
	}
	return nil
}

// concurrencyLevels are the levels -concurrency lists: [""] (the default) when it is empty,
// else positive integers, checked before anything is uploaded.
func concurrencyLevels(flag string) ([]string, error) {
	if flag == "" {
		return []string{""}, nil
	}
	levels := strings.Split(flag, ",")
	for i, l := range levels {
		l = strings.TrimSpace(l)
		if n, err := strconv.Atoi(l); err != nil || n < 1 {
			return nil, usageError{fmt.Sprintf("listing: -concurrency %q: %q is not a positive number of requests", flag, l)}
		}
		levels[i] = l
	}
	return levels, nil
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i > 0 {
		s = s[:i]
	}
	return "  ERROR " + s
}

// filesOf reads the number of files a run deleted (or would delete) from its JSON output
// (deltavacuum --json, or the delta-rs script's line); -1 when it cannot.
func filesOf(out []byte) int64 {
	var doc struct {
		DryRun           bool   `json:"dryRun"`
		NumDeletedFiles  *int64 `json:"numDeletedFiles"`
		NumFilesToDelete *int64 `json:"numFilesToDelete"`
		Files            *int64 `json:"files"`
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	if err := json.Unmarshal(out, &doc); err != nil {
		for sc.Scan() {
			if json.Unmarshal(sc.Bytes(), &doc) == nil {
				break
			}
		}
	}
	switch {
	case doc.DryRun && doc.NumFilesToDelete != nil:
		return *doc.NumFilesToDelete
	case doc.NumDeletedFiles != nil:
		return *doc.NumDeletedFiles
	case doc.NumFilesToDelete != nil:
		return *doc.NumFilesToDelete
	case doc.Files != nil:
		return *doc.Files
	}
	return -1
}

// layDown writes keys as files under dir (versitygw's posix backend serves them as objects).
func layDown(dir string, keys []string, content map[string][]byte) error {
	made := map[string]bool{}
	for _, k := range keys {
		if d := storage.Dir(k); !made[d] {
			if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755); err != nil {
				return err
			}
			made[d] = true
		}
	}
	var g errgroup.Group
	g.SetLimit(64)
	for _, k := range keys {
		g.Go(func() error { return os.WriteFile(filepath.Join(dir, filepath.FromSlash(k)), content[k], 0o644) })
	}
	return g.Wait()
}

// listingServer is one test server and how each engine reaches it.
type listingServer struct {
	store               benchStore
	bucket, uri         string
	endpoint            string // the server's own endpoint (the proxy's target)
	pageSize, batchSize int
	env                 []string // deltavacuum's environment (credentials)
	dvOptions           func(proxy string) []string
	deltarsURI          string
	deltarsEnv          func(proxy string) []string
	resetLog            func(ctx context.Context, files map[string][]byte) error
	prefix              string
}

func openListingServer(ctx context.Context, kind, prefix string) (*listingServer, error) {
	sv := &listingServer{prefix: prefix, pageSize: 1000, batchSize: 1000}
	switch kind {
	case "s3":
		ep, ak, sk := os.Getenv("DELTAVACUUM_TEST_S3_ENDPOINT"), os.Getenv("DELTAVACUUM_TEST_S3_ACCESS_KEY_ID"), os.Getenv("DELTAVACUUM_TEST_S3_SECRET_ACCESS_KEY")
		if !strings.HasPrefix(ep, "http://127.0.0.1:") {
			return nil, usageError{"listing: DELTAVACUUM_TEST_S3_ENDPOINT must be a loopback test server (source .cache/testservers.env)"}
		}
		sv.bucket, sv.endpoint = "dvbench", ep
		st, err := s3.New(ctx, s3.Config{Bucket: sv.bucket, Prefix: prefix, Region: "us-east-1", Endpoint: ep, PathStyle: true, AllowHTTP: true,
			AccessKeyID: ak, SecretAccessKey: sk, Concurrency: 64})
		if err != nil {
			return nil, err
		}
		_, err = st.Client().CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: &sv.bucket})
		var ae interface{ ErrorCode() string }
		if err != nil && (!errors.As(err, &ae) || (ae.ErrorCode() != "BucketAlreadyOwnedByYou" && ae.ErrorCode() != "BucketAlreadyExists")) {
			return nil, err
		}
		sv.store = st
		sv.uri = "s3://" + sv.bucket + "/" + prefix
		sv.env = []string{"AWS_ACCESS_KEY_ID=" + ak, "AWS_SECRET_ACCESS_KEY=" + sk, "AWS_REGION=us-east-1"}
		sv.dvOptions = func(proxy string) []string {
			return []string{"--storage-option", "aws_endpoint=" + proxy, "--storage-option", "aws_allow_http=true"}
		}
		sv.deltarsURI = sv.uri
		sv.deltarsEnv = func(proxy string) []string {
			return append(append([]string(nil), sv.env...), "AWS_ENDPOINT_URL="+proxy, "AWS_ALLOW_HTTP=true", "AWS_S3_ALLOW_UNSAFE_RENAME=true")
		}
	case "gcs":
		ep := os.Getenv("DELTAVACUUM_TEST_GCS_ENDPOINT")
		if !strings.HasPrefix(ep, "http://127.0.0.1:") {
			return nil, usageError{"listing: DELTAVACUUM_TEST_GCS_ENDPOINT must be a loopback test server"}
		}
		sv.bucket, sv.endpoint = "dvbench", ep
		st, err := gcs.New(ctx, gcs.Config{Bucket: sv.bucket, Prefix: prefix, Endpoint: ep, AllowHTTP: true, Concurrency: 64})
		if err != nil {
			return nil, err
		}
		if err := st.Client().Bucket(sv.bucket).Create(ctx, "test", nil); err != nil && !strings.Contains(err.Error(), "409") && !strings.Contains(strings.ToLower(err.Error()), "already") {
			return nil, err
		}
		sv.store = st
		sv.uri = "gs://" + sv.bucket + "/" + prefix
		sv.batchSize = 1
		sv.dvOptions = func(proxy string) []string {
			return []string{"--storage-option", "google_endpoint=" + proxy, "--storage-option", "google_allow_http=true"}
		}
		sv.deltarsURI = sv.uri
		sv.deltarsEnv = func(proxy string) []string {
			return []string{"GOOGLE_SKIP_SIGNATURE=true", "GOOGLE_BASE_URL=" + proxy, "STORAGE_EMULATOR_HOST=" + strings.TrimPrefix(proxy, "http://")}
		}
	case "azure":
		ep, acct, key := envOr("DELTAVACUUM_TEST_AZURE_ENDPOINT", "http://127.0.0.1:10000/devstoreaccount1"), envOr("DELTAVACUUM_TEST_AZURE_ACCOUNT", "devstoreaccount1"), os.Getenv("DELTAVACUUM_TEST_AZURE_KEY")
		if !strings.HasPrefix(ep, "http://127.0.0.1:") {
			return nil, usageError{"listing: DELTAVACUUM_TEST_AZURE_ENDPOINT must be a loopback test server"}
		}
		u, _ := url.Parse(ep)
		sv.bucket, sv.endpoint = "dvbench", u.Scheme+"://"+u.Host
		st, err := azure.New(ctx, azure.Config{ServiceURL: ep, Container: sv.bucket, Prefix: prefix, Account: acct, AccountKey: key, AllowHTTP: true, Concurrency: 64})
		if err != nil {
			return nil, err
		}
		if _, err := st.Client().Create(ctx, nil); err != nil && !bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
			return nil, err
		}
		sv.store = st
		sv.pageSize, sv.batchSize = 5000, azure.MaxBatch
		sv.uri = "az://" + sv.bucket + "/" + prefix
		sv.env = []string{"AZURE_STORAGE_ACCOUNT_NAME=" + acct, "AZURE_STORAGE_ACCOUNT_KEY=" + key}
		sv.dvOptions = func(proxy string) []string {
			return []string{"--storage-option", "azure_endpoint=" + proxy + u.Path, "--storage-option", "azure_allow_http=true"}
		}
		sv.deltarsURI = sv.uri
		sv.deltarsEnv = func(proxy string) []string {
			return append(append([]string(nil), sv.env...), "AZURE_STORAGE_USE_EMULATOR=true", "AZURITE_BLOB_STORAGE_URL="+proxy, "AZURE_ALLOW_HTTP=true")
		}
	default:
		return nil, usageError{"listing: -store must be s3, gcs or azure"}
	}
	sv.resetLog = func(ctx context.Context, files map[string][]byte) error {
		// Remove what the runs committed (VACUUM START and END, _last_vacuum_info), keep the
		// log as laid out.
		var extra []string
		err := sv.store.Walk(ctx, deltalog.LogDir, func(o storage.Object) error {
			if _, ok := files[o.Key]; !ok && !o.IsDir {
				extra = append(extra, o.Key)
			}
			return nil
		})
		if err != nil {
			return err
		}
		sort.Strings(extra)
		if len(extra) > 0 {
			_, err = sv.store.Delete(ctx, extra)
		}
		return err
	}
	return sv, nil
}
