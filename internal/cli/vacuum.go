package cli

import (
	"errors"
	"fmt"
	dvrun "github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/session"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/deltavacuum/deltavacuum/internal/redact"
	"github.com/deltavacuum/deltavacuum/sql"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// tableHelp says what a TABLE argument is, for every command that takes one.
const tableHelp = `TABLE is a directory path, a file:// URI, an object-store URI (abfss://CONTAINER@ACCOUNT.dfs.core.windows.net/PATH
for ADLS Gen2 and OneLake, wasbs://, az://, s3://, s3a://, gs://; settings with --storage-option
KEY=VALUE or the environment, listed by deltavacuum storage-options), or a table name. The rule
is the same as for the names in SQL statements (deltavacuum sql): an argument with a '/', a '\'
or a ':' is a path or URI; a bare word (t, schema.t, catalog.schema.t) is a table name when a
warehouse (--warehouse, $DELTAVACUUM_WAREHOUSE) or a catalog file (--catalog) is given, and a
path relative to the working directory otherwise (write ./t for a folder in every case). Names
are case-insensitive, as in Spark and Fabric: sales.orders finds Tables/sales/Orders (two folders
that differ only in case are an error naming both).`

func newVacuumCmd() *cobra.Command {
	var (
		sf          sessionFlags
		retainHours float64
		dryRun      bool
		asJSON      bool
		lite, full  bool
		progressArg string
		invSource   string
		invFormat   string
		trash       string
		noRecord    bool
		shardArg    string
		version     int64
		checkpoints []string
	)
	cmd := &cobra.Command{
		Use:   "vacuum TABLE",
		Short: "Delete the files a Delta table no longer needs",
		Long: `Delete the files a Delta table no longer references and that are older than the retention.

` + tableHelp + `

The retention is the table property delta.deletedFileRetentionDuration (default 168 hours)
unless --retain-hours is given; a shorter one is refused unless
--conf ` + vacuum.RetentionCheckKey + `=false.

--version V plans on snapshot version V instead of the latest (V must exist and its log must
still be readable); before deleting, a real run still reads every commit after V and keeps
what they reference. --shard I/N (it needs --version) vacuums shard I (0 to N-1) of N: only
the top-level folders and root files of the table that hash to I, so that N workers of a
scheduler (a Kubernetes Indexed Job: --shard "${JOB_COMPLETION_INDEX}/N") started with the same
N and V together delete exactly what one run would. Each shard records its own VACUUM START and
END, with the shard in its parameters; none writes _delta_log/_last_vacuum_info. In
Kubernetes: a Job with completionMode: Indexed, completions: N and parallelism up to N.

` + exitCodesHelp,
		Example: `  deltavacuum vacuum /data/sales --dry-run
  deltavacuum vacuum file:///data/sales --retain-hours 0 --conf spark.databricks.delta.retentionDurationCheck.enabled=false --json
  deltavacuum vacuum s3://bucket/sales --shard 3/8 --version 1042`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 2 && cmd.Flags().Changed("trash") && trash == dvrun.DefaultTrash {
				return usagef("expects one TABLE (got 2 arguments): to name the trash folder, write --trash=%s", args[1])
			}
			return exactArgs(1, "one TABLE")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			printed := false // --json: a result was printed; otherwise an error document is
			defer func() {
				if err != nil && asJSON && !printed {
					_ = writeJSON(cmd.OutOrStdout(), jsonError{Table: redact.FromContext(cmd.Context()).String(args[0]), Error: errorText(cmd.Context(), err), ExitCode: exitCode(cmd.Context(), err)})
				}
			}()
			s, err := sf.session()
			if err != nil {
				return err
			}
			var req session.VacuumRequest
			req.DryRun, req.Trash, req.NoRunRecord = dryRun, trash, noRecord
			if cmd.Flags().Changed("trash") {
				if trash == "" {
					return usagef("--trash needs a folder of the table, such as %s", dvrun.DefaultTrash)
				}
				if _, err := vacuum.TrashFolder(nil, trash); err != nil {
					return &UsageError{Err: err}
				}
				if noRecord {
					return usagef("--trash needs the run record (it says where each file went): drop --no-run-record")
				}
			}
			switch {
			case lite && full:
				return usagef("--lite and --full exclude each other")
			case lite:
				req.Mode = vacuum.ModeLite
			case full:
				req.Mode = vacuum.ModeFull
			}
			if cmd.Flags().Changed("retain-hours") {
				// The library decides (vacuum.RetentionOf); a flag that is no number of hours
				// is a usage error here. A finite number too large is the library's refusal,
				// which names the table.
				_, err := vacuum.RetentionOf(retainHours)
				switch {
				case errors.Is(err, vacuum.ErrRetentionNotANumber) || err != nil && math.IsInf(retainHours, 0):
					return usagef("--retain-hours %v is not a number of hours: give 0 or more", retainHours)
				case errors.Is(err, vacuum.ErrNegativeRetention):
					return usagef("--retain-hours %v: %s", retainHours, vacuum.ErrNegativeRetention)
				}
				req.RetainHours = &retainHours
			}
			if cmd.Flags().Changed("version") {
				if version < 0 {
					return usagef("--version %d: a table version is 0 or more", version)
				}
				req.Version = &version
			}
			if cmd.Flags().Changed("shard") {
				sh, err := vacuum.ParseShard(shardArg)
				if err != nil {
					return &UsageError{Err: fmt.Errorf("--shard: %w", err)}
				}
				if req.Version == nil {
					return &UsageError{Err: fmt.Errorf("--shard %s: %w", sh, vacuum.ErrShardWithoutVersion)}
				}
				req.Shard = &sh
			}
			if invSource != "" {
				inv, err := parseInventoryArg(invSource)
				if err != nil {
					return err
				}
				req.Inventory, req.InventoryFormat = inv, invFormat
			} else if cmd.Flags().Changed("inventory-format") {
				return usagef("--inventory-format needs --inventory")
			}
			req.Discover.StreamingCheckpoints = checkpoints
			ctx := cmd.Context()
			t, err := s.OpenArg(ctx, args[0])
			if err != nil {
				return err
			}
			prog, err := startProgress(progressArg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			req.Counters = prog.counters
			res, err := s.Vacuum(ctx, t, req)
			prog.Stop()
			err = retentionHint(err, false)
			if res != nil {
				printed = true
				if asJSON {
					if werr := writeJSON(cmd.OutOrStdout(), res); werr != nil {
						return werr
					}
				} else if werr := printResult(cmd.OutOrStdout(), res); werr != nil {
					return werr
				}
				printNotes(cmd.ErrOrStderr(), res)
				if err == nil && !res.DryRun && ctx.Err() != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), "deltavacuum: the interrupt came after the last delete: nothing was left to stop, and the run completed")
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.Float64Var(&retainHours, "retain-hours", 0, "retention in hours (RETAIN n HOURS); may be 0 or fractional (rounded half up)")
	f.BoolVar(&dryRun, "dry-run", false, "list what would be deleted; delete nothing")
	f.BoolVar(&asJSON, "json", false, "print one JSON document on standard output")
	f.BoolVar(&lite, "lite", false, "VACUUM LITE: take the candidates from the log, list no data directory")
	f.BoolVar(&full, "full", false, "VACUUM FULL even when "+session.SettingLite+" is true")
	f.StringVar(&invSource, "inventory", "", "USING INVENTORY `SOURCE`: a Delta table, Parquet or CSV file or folder, a cloud inventory report (S3 manifest.json, Azure blob inventory), or a query '(SELECT * FROM parquet.`/inv` WHERE ...)'")
	f.StringVar(&invFormat, "inventory-format", "auto", "format of --inventory: auto, delta, parquet, csv, azure, s3")
	f.StringVar(&progressArg, "progress", "auto", "progress on standard error: auto (on a terminal), json (one event per line), none")
	_ = cmd.RegisterFlagCompletionFunc("inventory-format", completeWords(inventoryFormats...))
	_ = cmd.RegisterFlagCompletionFunc("progress", completeWords(progressModes...))
	f.StringVar(&trash, "trash", "", "move the files into this hidden folder of the table instead of deleting them (undo moves them back; trash purge empties it); --trash alone: "+dvrun.DefaultTrash)
	f.Lookup("trash").NoOptDefVal = dvrun.DefaultTrash
	f.StringVar(&shardArg, "shard", "", "vacuum only shard `I/N` of the table (0 <= I < N; needs --version): N workers together do one run")
	f.Int64Var(&version, "version", 0, "plan on snapshot version `V` instead of the latest (every shard of one run gives the same V)")
	f.BoolVar(&noRecord, "no-run-record", false, "keep no run record under _deltavacuum/runs/ (the run cannot be undone)")
	f.StringArrayVar(&checkpoints, "streaming-checkpoint", nil, "checkpoint `LOCATION` of a Structured Streaming query that reads the table: what it reads next is kept (repeatable; the table property "+dvrun.StreamingCheckpointsProperty+" lists them too)")
	sf.add(cmd, vacuumSettings...)
	return cmd
}

func printResult(w io.Writer, res *vacuum.Result) error {
	if res.Shard != nil {
		// Last, after the summary line: the files' lines stay the first ones.
		defer fmt.Fprintf(w, "This was shard %s of %s at version %d: the other shards hold the rest of the table.\n", res.Shard, displayPath(res.Table), res.Version)
	}
	if res.DryRun {
		err := res.Files.Each(func(f vacuum.File) error {
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\n", f.Reason, f.Size, fileTime(f.ModificationTime), displayPath(f.Path))
			return nil
		})
		if err != nil {
			return err
		}
		for _, d := range res.Dirs {
			fmt.Fprintf(w, "directory\t\t\t%s\n", displayPath(d.Path+"/"))
		}
		printKeptForReaders(w, res.Plan)
		fmt.Fprintf(w, "Found %s (%s) and %s in a total of %s that are safe to delete.\n",
			filesPhrase(res.NumFilesToDelete), bytesPhrase(res.SizeOfDataToDelete),
			countPhrase(int64(len(res.Dirs)), "directory", "directories"), countPhrase(int64(res.TotalDirectories), "directory", "directories"))
		printCompanions(w, "go", res.NumChecksumFiles, res.SizeOfChecksumFiles)
		printReclaim(w, res)
		printUndoability(w, res)
		return nil
	}
	printKeptForReaders(w, res.Plan)
	if res.Plan != nil && res.Plan.Trash != "" {
		// Moved, not deleted: the files are in the run's trash until it is purged.
		fmt.Fprintf(w, "Moved %s (%s) to the trash %s and removed %s in a total of %s.\n",
			filesPhrase(res.NumDeletedFiles), bytesPhrase(res.SizeOfDeletedData), displayPath(dvrun.RunTrash(res.Plan.Trash, res.RunID)),
			countPhrase(res.NumDeletedDirectories, "directory", "directories"), countPhrase(int64(res.TotalDirectories), "directory", "directories"))
	} else {
		fmt.Fprintf(w, "Deleted %s (%s) and %s in a total of %s.\n",
			filesPhrase(res.NumDeletedFiles), bytesPhrase(res.SizeOfDeletedData),
			countPhrase(res.NumDeletedDirectories, "directory", "directories"), countPhrase(int64(res.TotalDirectories), "directory", "directories"))
	}
	printCompanions(w, "went", res.NumDeletedChecksumFiles, res.SizeOfDeletedChecksumFiles)
	if res.NumAlreadyGone == 1 {
		fmt.Fprintln(w, "1 file was already gone.")
	} else if res.NumAlreadyGone > 1 {
		fmt.Fprintf(w, "%d files were already gone.\n", res.NumAlreadyGone)
	}
	if len(res.Dropped) > 0 {
		fmt.Fprintf(w, "%d planned files or directories were kept because of commits made after planning:\n", len(res.Dropped))
		for _, d := range res.Dropped {
			fmt.Fprintf(w, "kept\t%s\t%s\n", displayPath(d.Path), droppedWhy(d))
		}
	}
	for _, f := range res.Failed {
		fmt.Fprintf(w, "failed\t%s\t%s\n", displayPath(f.Path), displayPath(f.Error))
	}
	if n := len(res.NotReached); n > 0 {
		// One line, not one per file (an interrupt reaches thousands): --json lists them.
		fmt.Fprintf(w, "Stopped before %s of the %d planned: nothing happened to them (--json lists them); run VACUUM again to delete them.\n", filesPhrase(int64(n)), res.NumFilesToDelete)
	}
	printReclaim(w, res)
	printUndoability(w, res)
	return nil
}

// printKeptForReaders prints each file the retention would delete that a reader of the table
// keeps, with the reader, then one line per reader.
func printKeptForReaders(w io.Writer, pl *vacuum.Plan) {
	if pl == nil {
		return
	}
	for _, f := range pl.KeptForReaders {
		fmt.Fprintf(w, "kept\t%d\t%s\t%s\tread by %s\n", f.Size, fileTime(f.ModificationTime), displayPath(f.Path), displayPath(strings.Join(f.KeptBy, "; ")))
	}
	for _, r := range pl.Readers {
		until := ""
		if !r.Until.IsZero() {
			until = ", until " + r.Until.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "Reader: %s keeps %s (%d bytes) that nothing else keeps%s.\n", displayPath(r.Describe()), filesPhrase(r.NumFilesKept), r.SizeKept, until)
	}
}

// fileTime is a modification time as the DRY RUN prints it: "-" when the plan does not know
// it (VACUUM LITE takes its candidates from the log, which records no modification time).
func fileTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02T15:04:05Z")
}

// retentionHint adds to the retention refusal how to turn the check off where the user is:
// the --conf flag on the command line, the SET statement in SQL.
func retentionHint(err error, inSQL bool) error {
	var re *vacuum.RetentionError
	if !errors.As(err, &re) {
		return err
	}
	how := "on the command line: --conf " + vacuum.RetentionCheckKey + "=false"
	if inSQL {
		how = "in SQL: SET " + vacuum.RetentionCheckKey + " = false; before the VACUUM statement"
	}
	return fmt.Errorf("%w\nTo turn the check off %s", err, how)
}

// printCompanions says how many Hadoop checksum companions go (went) with the files, apart from
// the files as Spark's summary counts them.
func printCompanions(w io.Writer, verb string, n, bytes int64) {
	if n == 0 {
		return
	}
	what := "companion"
	if n > 1 {
		what = "companions"
	}
	fmt.Fprintf(w, "With them %s %d Hadoop checksum %s (.<name>.crc, %d bytes).\n", verb, n, what, bytes)
}

// filesPhrase is "1 file" or "N files".
func filesPhrase(n int64) string { return countPhrase(n, "file", "files") }

// bytesPhrase is "1 byte" or "N bytes".
func bytesPhrase(n int64) string { return countPhrase(n, "byte", "bytes") }

// countPhrase is n with the singular or the plural of what.
func countPhrase(n int64, one, other string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, other)
}

// printUndoability says whether deltavacuum undo can bring back what the run deleted (would
// delete), as the run found it (vacuum.Undoability): it never promises what the store does not
// keep.
func printUndoability(w io.Writer, res *vacuum.Result) {
	u := res.Undo
	if u == nil || res.NumFilesToDelete == 0 && res.NumDeletedFiles == 0 {
		return
	}
	run := "This run"
	if res.DryRun {
		run = "A real run"
	} else if res.RunID != "" {
		run = "Run " + res.RunID
	}
	switch u.Possible {
	case vacuum.UndoYes:
		fmt.Fprintf(w, "%s can be undone: %s.\n", run, displayPath(u.Why))
	case vacuum.UndoNo:
		fmt.Fprintf(w, "%s %s.\n", run, displayPath(u.Why))
	default:
		fmt.Fprintf(w, "%s may not be undoable: %s.\n", run, displayPath(u.Why))
	}
}

// printReclaim says when the deleted bytes stop being billed, when that is not at once.
func printReclaim(w io.Writer, res *vacuum.Result) {
	r := res.Reclaim
	if r == nil {
		return
	}
	if r.BytesLater == 0 {
		return // freed at once: Spark's summary line says it all
	}
	what := "Storage reclaimed now: %s; %s reclaimed %s.\n"
	if res.DryRun {
		what = "Storage a run would reclaim now: %s; %s reclaimed %s.\n"
	}
	fmt.Fprintf(w, what, humanBytes(r.BytesNow), humanBytes(r.BytesLater), r.When)
}

// printNotes warns, on standard error, of what the run left alone on purpose.
func printNotes(w io.Writer, res *vacuum.Result) {
	for _, m := range res.Warnings {
		fmt.Fprintf(w, "warning: %s\n", m)
	}
	for _, n := range res.NestedTables {
		fmt.Fprintf(w, "warning: %s holds a _delta_log of its own: it is another Delta table inside this one, and nothing in it was touched; vacuum it on its own\n", displayPath(n+"/"))
	}
}

func droppedWhy(d vacuum.Dropped) string {
	switch d.Reason {
	case vacuum.DropReferenced:
		return fmt.Sprintf("version %d references it", d.Version)
	case vacuum.DropRetention:
		return fmt.Sprintf("too new for the retention raised in version %d", d.Version)
	case vacuum.DropHidden:
		return fmt.Sprintf("hidden by the metadata of version %d", d.Version)
	case vacuum.DropChanged:
		return "written again since it was listed (the store holds another version of it)"
	}
	return fmt.Sprintf("%s (version %d)", d.Reason, d.Version)
}

// displayPath is a file name as the text output shows it: as it is, unless it holds a
// character that could forge or hide output (a newline, a tab that would start a new column,
// another control or invisible character, invalid UTF-8), or starts with a double quote; then
// it is quoted with Go's escapes ("a\nb"), so that one line is always one file. --json gives
// every name raw.
func displayPath(p string) string {
	if strings.HasPrefix(p, `"`) || !utf8.ValidString(p) {
		return strconv.Quote(p)
	}
	for _, r := range p {
		if !strconv.IsPrint(r) {
			return strconv.Quote(p)
		}
	}
	return p
}

// parseInventoryArg reads --inventory: a query in parentheses, or a path.
func parseInventoryArg(src string) (*sql.Inventory, error) {
	if strings.HasPrefix(strings.TrimSpace(src), "(") {
		st, err := sql.Parse("VACUUM t USING INVENTORY " + src)
		if err != nil {
			return nil, &UsageError{Err: fmt.Errorf("--inventory %s: %w", src, err)}
		}
		return st.(*sql.Vacuum).Inventory, nil
	}
	return &sql.Inventory{Table: &sql.TableRef{Path: src}}, nil
}
