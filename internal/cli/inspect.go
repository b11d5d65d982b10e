package cli

import (
	"fmt"
	"github.com/deltavacuum/deltavacuum/session"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/deltavacuum/deltavacuum/insight"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

func newInspectCmd() *cobra.Command {
	var (
		sf           sessionFlags
		retainHours  float64
		whatIf       []float64
		forecastDays int
		top          int
		price        float64
		currency     string
		smallBytes   int64
		asJSON, lite bool
		invSource    string
		invFormat    string
		checkpoints  []string
	)
	cmd := &cobra.Command{
		Use:   "inspect TABLE",
		Short: "Show what VACUUM would reclaim: now, over the next days, at other retentions, and at what cost",
		Long: `Show how much of a Delta table's storage is stale and what VACUUM would reclaim, from the log
and one listing (or an inventory; --lite lists nothing and estimates from the log alone). Deletes
and writes nothing.

Figures: the bytes and files of each kind (live, deletion vectors, tombstoned inside and outside
the retention, change data, untracked, hidden, _delta_log); what a VACUUM run now deletes, file
for file the DRY RUN; a forecast of what becomes reclaimable on each of the next days if no new
commit comes; a what-if table of other retentions with the oldest version time travel still
reads after such a run; the monthly cost of the reclaimable bytes; the top partitions; the
share of small files (run OPTIMIZE first when it is high); the last VACUUM and OPTIMIZE; the
table's readers (pins, registered streaming queries, Iceberg metadata and how far behind it
is, shallow clones in the --warehouse), what each keeps that nothing else does and until when,
and a warning for every VACUUM another engine ran, which honours none of them. --json gives
every figure by name.`,
		Example: `  deltavacuum inspect /data/sales
  deltavacuum inspect abfss://ws@onelake.dfs.fabric.microsoft.com/lh.Lakehouse/Tables/sales --price-per-gb-month 0.023 --json
  deltavacuum inspect /data/sales --what-if-hours 24,168,720 --forecast-days 14 --top 5`,
		Args: exactArgs(1, "one TABLE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := sf.session()
			if err != nil {
				return err
			}
			f := cmd.Flags()
			var req session.InspectRequest
			req.Lite = lite
			if f.Changed("retain-hours") {
				req.RetainHours = &retainHours
			}
			if f.Changed("what-if-hours") {
				req.WhatIfHours = whatIf
				if req.WhatIfHours == nil {
					req.WhatIfHours = []float64{}
				}
			}
			if f.Changed("forecast-days") {
				req.ForecastDays = &forecastDays
			}
			if f.Changed("top") {
				req.TopPartitions = &top
			}
			if f.Changed("price-per-gb-month") {
				req.PricePerGBMonth = &price
			}
			req.Currency, req.SmallFileBytes = currency, smallBytes
			if f.Changed("small-file-bytes") && smallBytes <= 0 {
				return usagef("--small-file-bytes must be positive, got %d", smallBytes)
			}
			if lite && invSource != "" {
				return usagef("--lite and --inventory: %v", vacuum.ErrInventoryWithLite)
			}
			if invSource != "" {
				inv, err := parseInventoryArg(invSource)
				if err != nil {
					return err
				}
				req.Inventory, req.InventoryFormat = inv, invFormat
			} else if f.Changed("inventory-format") {
				return usagef("--inventory-format needs --inventory")
			}
			req.StreamingCheckpoints = checkpoints
			t, err := s.OpenArg(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			r, err := s.Inspect(cmd.Context(), t, req)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), r)
			}
			printReport(cmd.OutOrStdout(), r)
			return nil
		},
	}
	f := cmd.Flags()
	f.Float64Var(&retainHours, "retain-hours", 0, "retention of the VACUUM reported on (RETAIN n HOURS); default the table's")
	f.Float64SliceVar(&whatIf, "what-if-hours", nil, "retentions of the what-if table, comma-separated")
	f.Lookup("what-if-hours").DefValue = joinHours(insight.DefaultWhatIfHours) // what help prints: the library's default
	f.IntVar(&forecastDays, "forecast-days", insight.DefaultForecastDays, fmt.Sprintf("days of the forecast, 0 to %d", insight.MaxForecastDays))
	f.IntVar(&top, "top", insight.DefaultTopPartitions, "partitions to list, by reclaimable bytes")
	f.Float64Var(&price, "price-per-gb-month", insight.DefaultPricePerGBMonth, "storage price per GB (2^30 bytes) and month; the default is a list price of S3 Standard and OneLake: check your provider's")
	f.StringVar(&currency, "currency", "", "currency of --price-per-gb-month")
	f.Lookup("currency").DefValue = insight.DefaultCurrency
	f.Int64Var(&smallBytes, "small-file-bytes", insight.DefaultSmallFileBytes, "live files under this size count as small")
	f.BoolVar(&asJSON, "json", false, "print one JSON document with every figure")
	f.BoolVar(&lite, "lite", false, "estimate from the log alone; list nothing")
	f.StringVar(&invSource, "inventory", "", "count from an inventory instead of a listing (as vacuum --inventory)")
	f.StringVar(&invFormat, "inventory-format", "auto", "format of --inventory: auto, delta, parquet, csv, azure, s3")
	f.StringArrayVar(&checkpoints, "streaming-checkpoint", nil, "checkpoint `LOCATION` of a streaming query that reads the table (repeatable), as vacuum --streaming-checkpoint")
	_ = cmd.RegisterFlagCompletionFunc("inventory-format", completeWords(inventoryFormats...))
	sf.add(cmd)
	return cmd
}

// printReport prints an inspection as tables with units.
func printReport(w io.Writer, r *insight.Report) {
	fmt.Fprintf(w, "Table %s, version %d (counted from the %s)\n", displayPath(r.Table), r.Version, r.Source)
	fmt.Fprintf(w, "Retention %s (table: %s), cutoff %s, clock %s\n", hours(r.RetentionHours), hours(r.TableRetentionHours), stamp(r.Cutoff), stamp(r.Now))
	if r.BelowTableRetention {
		fmt.Fprintf(w, "  (shorter than the table's retention: VACUUM refuses it unless %s = false)\n", vacuum.RetentionCheckKey)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "files\tsize\t\t")
	b := r.Files
	for _, row := range []struct {
		name string
		c    insight.Count
	}{
		{"live", b.Live},
		{"deletion vectors of live files", b.DeletionVectors},
		{"tombstoned, inside the retention (kept)", b.TombstonedInRetention},
		{"tombstoned, expired", b.TombstonedExpired},
		{"change data", b.ChangeData},
		{"untracked", b.Untracked},
		{"unreferenced deletion vectors", b.UnreferencedDeletionVectors},
		{"kept for another spelling or a link", b.KeptOther},
		{"kept for readers (pins, streaming queries, Iceberg, clones)", b.KeptForReaders},
		{"hidden (kept)", b.Hidden},
		{"trash of --trash runs (billed until trash purge)", b.Trash},
		{"run records", b.RunRecords},
		{"nested tables (kept)", b.NestedTables},
		{"_delta_log commits", b.DeltaLog.Commits},
		{"_delta_log checkpoints", b.DeltaLog.Checkpoints},
		{"_delta_log other", b.DeltaLog.Other},
	} {
		fmt.Fprintf(tw, "%d\t%s\t\t%s\n", row.c.Files, bytesText(row.c.Bytes), row.name)
	}
	tw.Flush()

	rc := r.Reclaimable
	fmt.Fprintf(w, "\nReclaimable now: %d files, %s, and %d directories", rc.Files, bytesText(rc.Bytes), rc.Directories)
	if rc.ChecksumFiles > 0 {
		fmt.Fprintf(w, " (and %d checksum files with them)", rc.ChecksumFiles)
	}
	fmt.Fprintf(w, ": %s per month\n", money(rc.CostPerMonth, r.Price.Currency))
	reasons := make([]string, 0, len(rc.ByReason))
	for reason, c := range rc.ByReason {
		reasons = append(reasons, fmt.Sprintf("%s %d files, %s", reason, c.Files, bytesText(c.Bytes)))
	}
	slices.Sort(reasons)
	if len(reasons) > 0 {
		fmt.Fprintf(w, "  by reason: %s\n", strings.Join(reasons, "; "))
	}
	fmt.Fprintf(w, "  price: %s %g per GB-month (%s)\n", r.Price.Currency, r.Price.PerGBMonth, r.Price.Source)

	if len(r.Forecast) > 0 {
		fmt.Fprintf(w, "\nForecast at a retention of %s, if no new commit comes:\n", hours(r.RetentionHours))
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "day\tclock\tnew files\tnew size\ttotal files\ttotal size\t")
		for _, d := range r.Forecast {
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%d\t%s\t\n", d.Day, stamp(d.Clock), d.New.Files, bytesText(d.New.Bytes), d.Total.Files, bytesText(d.Total.Bytes))
		}
		tw.Flush()
	}

	fmt.Fprintf(w, "\nWhat if VACUUM ran now with another retention (time travel reaches back to version %d today):\n", r.OldestVersion)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "retention\tfiles\tsize\tper month\ttime travel reaches\t")
	for _, x := range r.WhatIf {
		reach := fmt.Sprintf("version %d", x.OldestVersion)
		if x.OldestVersionTime != nil {
			reach += " (" + stamp(*x.OldestVersionTime) + ")"
		}
		note := x.Preset
		if x.BelowTableRetention {
			note += "; needs the retention check off"
			note = strings.TrimPrefix(note, "; ")
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", hours(x.RetentionHours), x.Reclaimable.Files, bytesText(x.Reclaimable.Bytes), money(x.CostPerMonth, r.Price.Currency), reach, note)
	}
	tw.Flush()

	if len(r.Partitions) > 0 {
		fmt.Fprintf(w, "\nPartitions (top %d of %d by reclaimable size):\n", len(r.Partitions), r.NumPartitions)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "reclaimable\tfiles\tlive\tfiles\tsmall\tpartition")
		for _, p := range r.Partitions {
			name := p.Path
			if name == "" {
				name = "(root)"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%s\n", bytesText(p.Reclaimable.Bytes), p.Reclaimable.Files, bytesText(p.Live.Bytes), p.Live.Files, p.SmallFiles, displayPath(name))
		}
		tw.Flush()
	}

	sm := r.SmallFiles
	fmt.Fprintf(w, "\nSmall files: %d of %d live files are under %s (%.0f%%)", sm.Files, r.Files.Live.Files, bytesText(sm.ThresholdBytes), sm.Share*100)
	if sm.Share >= 0.5 && sm.Files > 1 {
		fmt.Fprint(w, ": run OPTIMIZE first, then VACUUM reclaims the files it replaces")
	}
	fmt.Fprintln(w)
	printDeletionVectors(w, r)
	printReaders(w, r)
	fmt.Fprintf(w, "Last VACUUM: %s\nLast OPTIMIZE: %s\n", opText(r.LastVacuum), opText(r.LastOptimize))
	for _, n := range r.NestedTables {
		fmt.Fprintf(w, "note: %s holds another Delta table, counted apart and never vacuumed with this one\n", displayPath(n+"/"))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// printReaders prints the table's readers: what each keeps alone, until when; the Iceberg
// view's lag; the VACUUMs of other engines.
func printReaders(w io.Writer, r *insight.Report) {
	rd := r.Readers
	if rd == nil {
		return
	}
	if len(rd.Readers) == 0 {
		fmt.Fprintln(w, "\nReaders: none found (no pins, no registered streaming query, no Iceberg metadata, no shallow clone in the warehouse).")
	} else {
		fmt.Fprintln(w, "\nReaders (what VACUUM keeps for each that nothing else keeps):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "kind\tversion\tkept alone\tsize\tper month\tuntil\treader")
		for _, x := range rd.Readers {
			v, until := "-", "-"
			if x.Version != nil {
				v = fmt.Sprint(*x.Version)
			}
			if x.Until != nil {
				until = stamp(*x.Until)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", x.Kind, v, x.KeptOnlyForIt.Files, bytesText(x.KeptOnlyForIt.Bytes),
				money(x.CostPerMonth, r.Price.Currency), until, displayPath(x.Describe))
		}
		tw.Flush()
	}
	if ib := rd.Iceberg; ib != nil {
		lag := "its lag is unknown"
		switch {
		case ib.LagVersions != nil && ib.LagHours != nil:
			lag = fmt.Sprintf("%d versions and %.1f hours behind the Delta table", *ib.LagVersions, *ib.LagHours)
		case ib.LagHours != nil:
			lag = fmt.Sprintf("at least %.1f hours behind the Delta table", *ib.LagHours)
		}
		engine := ib.Engine
		if engine == "" {
			engine = "a converter that records no Delta version"
		}
		fmt.Fprintf(w, "Iceberg: %s, written by %s: %s\n", displayPath(ib.Metadata), engine, lag)
	}
	for _, o := range rd.OtherVacuums {
		fmt.Fprintf(w, "warning: %s\n", o)
	}
	for _, n := range rd.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// printDeletionVectors prints what the live files' deletion vectors mark deleted, which VACUUM
// cannot reclaim, and what a purge would (nothing for a table without them).
func printDeletionVectors(w io.Writer, r *insight.Report) {
	d := r.DeletionVectors
	if d == nil || d.Files.Files == 0 {
		return
	}
	fmt.Fprintf(w, "Deletion vectors: %s (%s) carry one, with %s of vectors (%s)", countText(d.Files.Files, "live file"), bytesText(d.Files.Bytes),
		countText(d.VectorFiles.Files, "file"), bytesText(d.VectorFiles.Bytes))
	if d.InlineVectors > 0 {
		fmt.Fprintf(w, " and %d inline", d.InlineVectors)
	}
	fmt.Fprintln(w)
	if d.Rows > 0 {
		fmt.Fprintf(w, "  %d of %d rows marked deleted (%.1f%%), about %s of the files: VACUUM cannot reclaim them while the files are live\n",
			d.DeletedRows, d.Rows, 100*d.DeletedShare, bytesText(d.DeletedBytes))
	}
	fmt.Fprintf(w, "  past %g%% deleted, which OPTIMIZE rewrites: %s (%s, about %s deleted)\n", 100*insight.OptimizeDeletedRowsRatio,
		countText(d.PastOptimize.Files, "file"), bytesText(d.PastOptimize.Bytes), bytesText(d.PastOptimize.DeletedBytes))
	fmt.Fprintf(w, "  more than half deleted: %s (%s)\n", countText(d.MostlyDeleted.Files, "file"), bytesText(d.MostlyDeleted.Bytes))
	if d.UnknownShare.Files > 0 {
		fmt.Fprintf(w, "  share of deleted rows unknown (no numRecords in their statistics): %s (%s)\n", countText(d.UnknownShare.Files, "file"), bytesText(d.UnknownShare.Bytes))
	}
	p := d.Purge
	fmt.Fprintf(w, "  REORG TABLE ... APPLY (PURGE), then a VACUUM once %s have passed: deletes %s (%s), writes about %s: saves about %s, %s per month\n",
		hours(p.RetentionHours), countText(p.Reclaimable.Files, "file"), bytesText(p.Reclaimable.Bytes), bytesText(p.WrittenBytes),
		bytesText(max(p.SavedBytes, 0)), money(p.CostPerMonth, r.Price.Currency))
}

// countText is n of a thing: "1 file", "3 files".
func countText(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

func opText(op *insight.Operation) string {
	if op == nil {
		return "none in the history"
	}
	return fmt.Sprintf("version %d at %s (%s)", op.Version, stamp(op.Timestamp), op.Operation)
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04Z") }

func hours(h float64) string { return fmt.Sprintf("%g h", h) }

func money(v float64, currency string) string {
	if v > 0 && v < 0.01 {
		return "< 0.01 " + currency
	}
	return fmt.Sprintf("%.2f %s", v, currency)
}

// bytesText is a size in binary units: 512 B, 1.5 KiB, 20.0 MiB, 3.25 GiB.
func bytesText(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v := float64(n) / 1024
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f %s", v, units[i])
	case v >= 10:
		return fmt.Sprintf("%.1f %s", v, units[i])
	}
	return fmt.Sprintf("%.2f %s", v, units[i])
}

// joinHours writes hours as --what-if-hours takes them: 24,48,72.
func joinHours(hours []float64) string {
	s := make([]string, len(hours))
	for i, h := range hours {
		s[i] = strconv.FormatFloat(h, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}
