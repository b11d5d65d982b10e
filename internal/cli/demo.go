package cli

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

func newDemoCmd() *cobra.Command {
	var (
		keep      bool
		withServe bool
		listen    string
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Build an example table in a temporary directory, show the DRY RUN, vacuum it",
		Long: `Build an example table in a temporary directory, show the DRY RUN, vacuum it.

With --serve, build the example table and open it in the maintenance service instead (its web
page at http://127.0.0.1:8080/ by default): preview the table, run the previewed plan, follow
it, undo it (the demo's policy moves files to the table's trash, so the undo brings them back).
Stop it with Ctrl-C; the temporary directory is removed unless --keep.`,
		Example: `  deltavacuum demo
  deltavacuum demo --serve                      # then open http://127.0.0.1:8080/
  deltavacuum demo --serve --listen 127.0.0.1:9090`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("listen") && !withServe {
				return usagef("--listen is a flag of demo --serve")
			}
			dir, err := os.MkdirTemp("", "deltavacuum-demo-")
			if err != nil {
				return err
			}
			if !keep {
				defer os.RemoveAll(dir)
			}
			if withServe {
				return serveDemo(cmd, dir, listen)
			}
			return runDemo(cmd.Context(), cmd.OutOrStdout(), filepath.Join(dir, "sales"))
		},
	}
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the example table (its path is printed)")
	cmd.Flags().BoolVar(&withServe, "serve", false, "open the example table in the maintenance service's web page instead of vacuuming it")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8080", "with --serve: the loopback address to listen on (IP:port; port 0 picks one)")
	return cmd
}

// demoFile is a file of the example table, with its age.
type demoFile struct {
	path string
	age  time.Duration
	note string
}

func runDemo(ctx context.Context, w io.Writer, dir string) error {
	files, err := buildDemoTable(ctx, dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "== An example table at %s\n", dir)
	for _, f := range files {
		fmt.Fprintf(w, "   %-52s %s\n", f.path, f.note)
	}
	t, err := deltavacuum.Open(ctx, dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n== deltavacuum vacuum %s --dry-run\n", dir)
	res, err := t.Vacuum(ctx, deltavacuum.VacuumOptions{DryRun: true})
	if err != nil {
		return err
	}
	if err := printResult(w, res); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n== deltavacuum vacuum %s\n", dir)
	res, err = t.Vacuum(ctx, deltavacuum.VacuumOptions{})
	if err != nil {
		return err
	}
	if err := printResult(w, res); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n== What is left (the log and hidden folders are never touched)\n")
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		if d.IsDir() {
			rel += "/"
		}
		fmt.Fprintf(w, "   %s\n", filepath.ToSlash(rel))
		return nil
	})
}

// buildDemoTable writes the example table at dir: its files (with their ages) and its log.
func buildDemoTable(ctx context.Context, dir string) ([]demoFile, error) {
	now := time.Now()
	day := 24 * time.Hour
	files := []demoFile{
		{"region=eu/part-00000-1a2b.c000.snappy.parquet", 10 * day, "removed by OPTIMIZE 9 days ago: tombstone past the 7-day retention"},
		{"region=eu/.part-00000-1a2b.c000.snappy.parquet.crc", 10 * day, "its Hadoop checksum: goes with it"},
		{"region=us/part-00001-3c4d.c000.snappy.parquet", 10 * day, "removed by OPTIMIZE 9 days ago"},
		{"region=eu/part-00002-5e6f.c000.snappy.parquet", 9 * day, "live"},
		{"region=us/part-00003-7a8b.c000.snappy.parquet", 9 * day, "removed 1 hour ago: inside the retention, kept for time travel"},
		{"region=us/part-00004-9c0d.c000.snappy.parquet", 1 * time.Hour, "live"},
		{"region=eu/part-00099-dead.c000.snappy.parquet", 12 * day, "written by a failed job, never committed: untracked and old"},
		{"region=us/part-00098-beef.c000.snappy.parquet", 2 * time.Hour, "untracked but fresh: a writer may be about to commit it"},
		{"region=apac/part-00005-aaaa.c000.snappy.parquet", 12 * day, "untracked and old: its folder empties and goes too"},
		{"_spark_staging/part-00097.c000.snappy.parquet", 20 * day, "hidden folder: never touched"},
	}
	store, err := local.New(dir)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte("PAR1 demo data of "+f.path+" PAR1"), 0o644); err != nil {
			return nil, err
		}
		if err := os.Chtimes(p, now.Add(-f.age), now.Add(-f.age)); err != nil {
			return nil, err
		}
	}
	ms := func(d time.Duration) int64 { return now.Add(-d).UnixMilli() }
	add := func(path string, age time.Duration) map[string]any {
		return map[string]any{"add": map[string]any{"path": path, "partitionValues": map[string]string{"region": path[7:9]},
			"size": int64(len("PAR1 demo data of " + path + " PAR1")), "modificationTime": ms(age), "dataChange": true}}
	}
	remove := func(path string, age time.Duration) map[string]any {
		return map[string]any{"remove": map[string]any{"path": path, "deletionTimestamp": ms(age), "dataChange": false}}
	}
	info := func(op string, age time.Duration) map[string]any {
		return map[string]any{"commitInfo": map[string]any{"timestamp": ms(age), "operation": op, "engineInfo": "deltavacuum-demo"}}
	}
	commits := [][]any{
		{info("WRITE", 10*day),
			map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
			map[string]any{"metaData": map[string]any{"id": "6c1a9e8e-demo", "format": map[string]any{"provider": "parquet", "options": map[string]string{}},
				"schemaString":     `{"type":"struct","fields":[{"name":"amount","type":"long","nullable":true,"metadata":{}},{"name":"region","type":"string","nullable":true,"metadata":{}}]}`,
				"partitionColumns": []string{"region"}, "configuration": map[string]string{}, "createdTime": ms(10 * day)}},
			add("region=eu/part-00000-1a2b.c000.snappy.parquet", 10*day),
			add("region=us/part-00001-3c4d.c000.snappy.parquet", 10*day)},
		{info("OPTIMIZE", 9*day),
			remove("region=eu/part-00000-1a2b.c000.snappy.parquet", 9*day),
			remove("region=us/part-00001-3c4d.c000.snappy.parquet", 9*day),
			add("region=eu/part-00002-5e6f.c000.snappy.parquet", 9*day),
			add("region=us/part-00003-7a8b.c000.snappy.parquet", 9*day)},
		{info("UPDATE", time.Hour),
			remove("region=us/part-00003-7a8b.c000.snappy.parquet", time.Hour),
			add("region=us/part-00004-9c0d.c000.snappy.parquet", time.Hour)},
	}
	for v, c := range commits {
		if err := deltalog.WriteCommit(ctx, store, int64(v), c); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// demoConfig is the maintenance.yaml of demo --serve: the example table, moved to its trash
// (so that the page's Undo brings its files back on local disk), no schedule.
const demoConfig = `# Written by deltavacuum demo --serve.
listen: %s
dataDir: state
tables:
  - id: sales
    path: %s
    policy:
      trash: true
`

// serveDemo builds the example table in dir and serves it until the command's context ends.
func serveDemo(cmd *cobra.Command, dir, listen string) error {
	ap, err := netip.ParseAddrPort(listen)
	if err != nil || !ap.Addr().IsLoopback() {
		return usagef("--listen %q: give a loopback IP:port, such as 127.0.0.1:8080 (the demo has no token)", listen)
	}
	table := filepath.Join(dir, "sales")
	if _, err := buildDemoTable(cmd.Context(), table); err != nil {
		return err
	}
	path := filepath.Join(dir, "maintenance.yaml")
	yaml := fmt.Sprintf(demoConfig, strconv.Quote(ap.String()), strconv.Quote(table))
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		return err
	}
	cfg, err := config.Load(path)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	return serve(cmd.Context(), cmd, cfg, time.Minute, func(addr net.Addr) {
		fmt.Fprintf(w, "== An example table at %s, served with %s\n", table, path)
		fmt.Fprintf(w, "   Open http://%s/ : preview the table sales, Run now, follow the run, Undo it.\n", addr)
		fmt.Fprintf(w, "   Stop with Ctrl-C.\n")
	})
}
