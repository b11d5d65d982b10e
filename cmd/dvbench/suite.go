package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/deltavacuum/deltavacuum/bench/tablegen"
)

// record is one measured run: one line of the suite's JSONL output.
type record struct {
	Label       string         `json:"label,omitempty"`
	Case        string         `json:"case"`
	Rep         int            `json:"rep"`
	Live        int64          `json:"live"`
	Stale       int64          `json:"stale"`
	Partitions  int            `json:"partitions"`
	WallSeconds float64        `json:"wallSeconds"`
	MaxRSSMiB   float64        `json:"maxRSSMiB"`
	UserSeconds float64        `json:"userSeconds"`
	SysSeconds  float64        `json:"sysSeconds"`
	Files       int64          `json:"files"` // files deleted, or to delete on a DRY RUN; -1 unknown
	Inner       map[string]any `json:"inner,omitempty"`
	Error       string         `json:"error,omitempty"`
	Time        time.Time      `json:"time"`
}

type suite struct {
	table, work              string
	t                        *tablegen.Table
	deltavacuum, dvbench     string
	oldDeltavacuum           string // the binary of the old-dv-* cases
	python, deltars          string
	sparkPython, sparkScript string
	devnull                  *os.File
}

// caseDef runs one case once and fills r; the table is reset after a destructive case.
type caseDef struct {
	destructive bool
	run         func(s *suite, ctx context.Context, r *record) error
}

var cases = map[string]caseDef{
	"floor":       {true, (*suite).floor},
	"find":        {false, (*suite).find},
	"dv-dry":      {false, func(s *suite, ctx context.Context, r *record) error { return s.dv(ctx, r, "--dry-run") }},
	"dv-full":     {true, func(s *suite, ctx context.Context, r *record) error { return s.dv(ctx, r) }},
	"dv-lite-dry": {false, func(s *suite, ctx context.Context, r *record) error { return s.dv(ctx, r, "--lite", "--dry-run") }},
	"dv-lite":     {true, func(s *suite, ctx context.Context, r *record) error { return s.dv(ctx, r, "--lite") }},
	// The same with another binary (-old-deltavacuum), interleaved with the new one: a change
	// is measured old beside new in one run, under the same load.
	"old-dv-dry": {false, func(s *suite, ctx context.Context, r *record) error {
		return s.dvWith(ctx, r, s.oldDeltavacuum, "--dry-run")
	}},
	"old-dv-full":  {true, func(s *suite, ctx context.Context, r *record) error { return s.dvWith(ctx, r, s.oldDeltavacuum) }},
	"deltars-dry":  {false, func(s *suite, ctx context.Context, r *record) error { return s.deltaRS(ctx, r, "--dry-run") }},
	"deltars-full": {true, func(s *suite, ctx context.Context, r *record) error { return s.deltaRS(ctx, r) }},
	"deltars-load": {false, func(s *suite, ctx context.Context, r *record) error { return s.deltaRS(ctx, r, "--load-only") }},
	"replay":       {false, (*suite).replay},
	"spark-dry":    {false, func(s *suite, ctx context.Context, r *record) error { return s.spark(ctx, r, "--dry-run") }},
	"spark-full":   {true, func(s *suite, ctx context.Context, r *record) error { return s.spark(ctx, r) }},
	"plan-synthetic": {false, func(s *suite, ctx context.Context, r *record) error {
		return s.library(ctx, r, "plan-synthetic", s.table)
	}},
	"plan-inventory": {false, func(s *suite, ctx context.Context, r *record) error {
		return s.library(ctx, r, "plan-synthetic", "-inventory", s.table)
	}},
}

func cmdSuite(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("suite", flag.ContinueOnError)
	table := fs.String("table", "", "table written by dvbench gen (or gen -synthetic for plan-synthetic)")
	reps := fs.Int("reps", 3, "runs of each case; cases are interleaved run by run")
	caseList := fs.String("cases", "floor,dv-dry,dv-full,dv-lite,deltars-dry,deltars-full", "cases to run, in order: "+strings.Join(slices.Sorted(maps.Keys(cases)), ","))
	label := fs.String("label", "", "label of the records (e.g. the scale)")
	out := fs.String("out", "", "append one JSON line per run to this file")
	s := &suite{}
	fs.StringVar(&s.deltavacuum, "deltavacuum", "bin/deltavacuum", "the deltavacuum binary")
	fs.StringVar(&s.oldDeltavacuum, "old-deltavacuum", "", "the deltavacuum binary of the old-dv-* cases (an earlier build)")
	fs.StringVar(&s.python, "python", ".cache/bench-venv/bin/python", "Python with deltalake installed (delta-rs cases)")
	fs.StringVar(&s.deltars, "deltars-script", "bench/deltars_vacuum.py", "the delta-rs driver script")
	fs.StringVar(&s.sparkPython, "spark-python", ".cache/conformance-venv/bin/python", "Python with pyspark (Spark cases)")
	fs.StringVar(&s.sparkScript, "spark-script", "bench/spark_vacuum.py", "the Delta Spark driver script")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if *table == "" {
		return usageError{"suite: -table is required"}
	}
	var err error
	if s.t, s.table, err = loadTable(*table); err != nil {
		return err
	}
	for _, p := range []*string{&s.deltavacuum, &s.oldDeltavacuum, &s.deltars, &s.python, &s.sparkPython, &s.sparkScript} {
		// Paths are made absolute (children run in another directory); bare names are
		// looked up in PATH.
		if strings.Contains(*p, "/") {
			if a, err := filepath.Abs(*p); err == nil {
				*p = a
			}
		}
	}
	if s.dvbench, err = os.Executable(); err != nil {
		return err
	}
	if s.devnull, err = os.OpenFile(os.DevNull, os.O_WRONLY, 0); err != nil {
		return err
	}
	defer s.devnull.Close()
	s.work = filepath.Dir(s.table)
	var names []string
	for _, c := range strings.Split(*caseList, ",") {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		if _, ok := cases[c]; !ok {
			return usageError{fmt.Sprintf("suite: unknown case %q", c)}
		}
		if strings.HasPrefix(c, "old-") && s.oldDeltavacuum == "" {
			return usageError{fmt.Sprintf("suite: case %s needs -old-deltavacuum", c)}
		}
		names = append(names, c)
	}
	var sink io.Writer = io.Discard
	if *out != "" {
		f, err := os.OpenFile(*out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		sink = f
	}
	// Warm the file system caches once (names and inodes), so that every measured run sees the
	// same (warm) state.
	if _, err := runChild(ctx, s.work, s.devnull, "find", s.table, "-printf", "%s %T@ %p\n"); err != nil {
		return err
	}
	var all []record
	for rep := 1; rep <= *reps; rep++ {
		for _, name := range names {
			c := cases[name]
			r := record{Label: *label, Case: name, Rep: rep, Live: s.t.Live, Stale: s.t.Stale(), Partitions: s.t.Partitions, Files: -1}
			err := c.run(s, ctx, &r)
			r.Time = time.Now().UTC()
			if c.destructive {
				// Check that the run deleted no live file (re-creating any it did), then
				// re-create what it deleted.
				if rerr := s.t.Reset(ctx, s.table, true); errors.Is(rerr, tablegen.ErrLiveFileMissing) {
					err = errors.Join(err, fmt.Errorf("after the run: %w", rerr))
				} else if rerr != nil {
					return fmt.Errorf("resetting after %s run %d: %w", name, rep, rerr)
				}
			}
			if err != nil {
				r.Error = err.Error()
				fmt.Fprintf(os.Stderr, "dvbench suite: %s run %d: %v\n", name, rep, err)
			} else {
				fmt.Fprintf(os.Stderr, "dvbench suite: %-14s run %d: %7.2fs %8.1f MiB  files %d\n", name, rep, r.WallSeconds, r.MaxRSSMiB, r.Files)
			}
			b, _ := json.Marshal(r)
			fmt.Fprintln(sink, string(b))
			all = append(all, r)
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	printSummary(os.Stdout, names, all)
	return nil
}

func (r *record) set(st childStats) {
	r.WallSeconds = st.Wall.Seconds()
	r.MaxRSSMiB = float64(st.MaxRSSKB) / 1024
	r.UserSeconds = st.User.Seconds()
	r.SysSeconds = st.Sys.Seconds()
}

// floor is the I/O floor on local disk: find listing the table (with each entry's size and
// modification time, as a vacuum needs them), then rm of exactly the stale files.
func (s *suite) floor(ctx context.Context, r *record) error {
	list, err := runChild(ctx, s.work, s.devnull, "find", s.table, "-printf", "%s %T@ %p\n")
	if err != nil {
		return err
	}
	rm, err := runChild(ctx, s.table, s.devnull, "xargs", "-a", stalePath(s.table), "-d", "\n", "rm", "-f", "--")
	if err != nil {
		return err
	}
	r.set(childStats{Wall: list.Wall + rm.Wall, MaxRSSKB: max(list.MaxRSSKB, rm.MaxRSSKB), User: list.User + rm.User, Sys: list.Sys + rm.Sys})
	r.Files = s.t.Stale()
	r.Inner = map[string]any{"findSeconds": list.Wall.Seconds(), "rmSeconds": rm.Wall.Seconds()}
	return nil
}

// find is the listing floor alone: what a DRY RUN, which deletes nothing, is compared with.
func (s *suite) find(ctx context.Context, r *record) error {
	st, err := runChild(ctx, s.work, s.devnull, "find", s.table, "-printf", "%s %T@ %p\n")
	if err != nil {
		return err
	}
	r.set(st)
	r.Files = 0
	return nil
}

var summaryLine = regexp.MustCompile(`(?m)^(?:Found|Deleted) (\d+) files`)

// dv runs the deltavacuum binary: retention 0 with the check off, text output to a file.
func (s *suite) dv(ctx context.Context, r *record, extra ...string) error {
	return s.dvWith(ctx, r, s.deltavacuum, extra...)
}

// dvWith is dv with the binary bin.
func (s *suite) dvWith(ctx context.Context, r *record, bin string, extra ...string) error {
	outPath := s.table + ".out"
	f, err := os.Create(outPath)
	if err != nil {
		return err
	}
	defer os.Remove(outPath)
	defer f.Close()
	args := append([]string{"vacuum", s.table, "--retain-hours", "0",
		"--conf", "spark.databricks.delta.retentionDurationCheck.enabled=false", "--progress", "none"}, extra...)
	st, err := runChild(ctx, s.work, f, bin, args...)
	r.set(st)
	if err != nil {
		return err
	}
	tail, err := readTail(outPath, 4096)
	if err != nil {
		return err
	}
	m := summaryLine.FindAllSubmatch(tail, -1)
	if len(m) == 0 {
		return fmt.Errorf("no summary line in the output: %q", tail)
	}
	r.Files, _ = strconv.ParseInt(string(m[len(m)-1][1]), 10, 64)
	return nil
}

func readTail(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := max(0, fi.Size()-n)
	buf := make([]byte, fi.Size()-off)
	_, err = f.ReadAt(buf, off)
	return buf, err
}

// deltaRS runs the delta-rs driver script, which prints one JSON line with its own timings.
func (s *suite) deltaRS(ctx context.Context, r *record, extra ...string) error {
	var out bytes.Buffer
	st, err := runChild(ctx, s.work, &out, s.python, append([]string{s.deltars, s.table}, extra...)...)
	r.set(st)
	if err != nil {
		return err
	}
	return s.inner(r, out.Bytes())
}

// spark runs the Delta Spark driver script; its JSON line has the JVM's peak RSS, which is
// recorded as the run's (the Python process is only the driver's client).
func (s *suite) spark(ctx context.Context, r *record, extra ...string) error {
	var out bytes.Buffer
	st, err := runChild(ctx, s.work, &out, s.sparkPython, append([]string{s.sparkScript, s.table}, extra...)...)
	r.set(st)
	if err != nil {
		return err
	}
	if err := s.inner(r, out.Bytes()); err != nil {
		return err
	}
	if v, ok := r.Inner["jvmPeakRSSMiB"].(float64); ok {
		r.MaxRSSMiB = max(r.MaxRSSMiB, v)
	}
	return nil
}

func (s *suite) inner(r *record, out []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(out))
	var last []byte
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			last = append(last[:0], sc.Bytes()...)
		}
	}
	if err := json.Unmarshal(last, &r.Inner); err != nil {
		return fmt.Errorf("reading the child's JSON line %q: %w", last, err)
	}
	if n, ok := r.Inner["files"].(float64); ok {
		r.Files = int64(n)
	}
	return nil
}

func (s *suite) replay(ctx context.Context, r *record) error {
	return s.library(ctx, r, "replay", s.table)
}

// library runs a dvbench subcommand that uses the library in a child process.
func (s *suite) library(ctx context.Context, r *record, args ...string) error {
	var out bytes.Buffer
	st, err := runChild(ctx, s.work, &out, s.dvbench, args...)
	r.set(st)
	if err != nil {
		return err
	}
	if err := s.inner(r, out.Bytes()); err != nil {
		return err
	}
	if n, ok := r.Inner["candidates"].(float64); ok {
		r.Files = int64(n)
	}
	return nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func printSummary(w io.Writer, names []string, all []record) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\truns\tmedian wall s\tmin\tmax\tmedian CPU s\tmedian peak RSS MiB\tfiles\t")
	// med holds each case's medians: wall time, peak RSS, CPU time (user + sys).
	med := map[string][3]float64{}
	for _, n := range names {
		var wall, rss, cpu []float64
		files := int64(-1)
		for _, r := range all {
			if r.Case == n && r.Error == "" {
				wall = append(wall, r.WallSeconds)
				rss = append(rss, r.MaxRSSMiB)
				cpu = append(cpu, r.UserSeconds+r.SysSeconds)
				files = r.Files
			}
		}
		if len(wall) == 0 {
			fmt.Fprintf(tw, "%s\t0\t-\t-\t-\t-\t-\t-\t\n", n)
			continue
		}
		med[n] = [3]float64{median(wall), median(rss), median(cpu)}
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.1f\t%d\t\n", n, len(wall), median(wall), slices.Min(wall), slices.Max(wall), median(cpu), median(rss), files)
	}
	tw.Flush()
	ratio := func(what, a, b string, i int) {
		x, okA := med[a]
		y, okB := med[b]
		if okA && okB && y[i] > 0 {
			fmt.Fprintf(w, "%s: %s / %s = %.2f\n", what, a, b, x[i]/y[i])
		}
	}
	const wall, rss, cpu = 0, 1, 2
	ratio("time vs floor", "dv-full", "floor", wall)
	ratio("CPU vs floor", "dv-full", "floor", cpu)
	ratio("dry run CPU vs find", "dv-dry", "find", cpu)
	ratio("speed-up over delta-rs", "deltars-full", "dv-full", wall)
	ratio("speed-up over delta-rs (dry run)", "deltars-dry", "dv-dry", wall)
	ratio("peak memory vs delta-rs", "dv-full", "deltars-full", rss)
	ratio("peak memory vs delta-rs (dry run)", "dv-dry", "deltars-dry", rss)
	ratio("CPU, new vs old", "dv-full", "old-dv-full", cpu)
	ratio("CPU, new vs old (dry run)", "dv-dry", "old-dv-dry", cpu)
	ratio("peak memory, new vs old", "dv-full", "old-dv-full", rss)
	ratio("peak memory, new vs old (dry run)", "dv-dry", "old-dv-dry", rss)
}
