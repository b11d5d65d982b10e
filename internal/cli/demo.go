package cli

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

func newDemoCmd() *cobra.Command {
	var keep bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Build an example table in a temporary directory, show the DRY RUN, vacuum it",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := os.MkdirTemp("", "deltavacuum-demo-")
			if err != nil {
				return err
			}
			if !keep {
				defer os.RemoveAll(dir)
			}
			return runDemo(cmd.Context(), cmd.OutOrStdout(), filepath.Join(dir, "sales"))
		},
	}
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the example table (its path is printed)")
	return cmd
}

// demoFile is a file of the example table, with its age.
type demoFile struct {
	path string
	age  time.Duration
	note string
}

func runDemo(ctx context.Context, w io.Writer, dir string) error {
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
		return err
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte("PAR1 demo data of "+f.path+" PAR1"), 0o644); err != nil {
			return err
		}
		if err := os.Chtimes(p, now.Add(-f.age), now.Add(-f.age)); err != nil {
			return err
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
			return err
		}
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
	printResult(w, res)
	fmt.Fprintf(w, "\n== deltavacuum vacuum %s\n", dir)
	res, err = t.Vacuum(ctx, deltavacuum.VacuumOptions{})
	if err != nil {
		return err
	}
	printResult(w, res)
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
