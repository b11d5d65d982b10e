package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	dvrun "github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/undo"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

func newRunsCmd() *cobra.Command {
	var (
		sf     sessionFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "runs TABLE",
		Short: "List the VACUUM runs recorded beside a table, which undo can take back",
		Long: `List the run records a real VACUUM keeps under _deltavacuum/runs/ in the table, newest first: when
each run started, its state, what it deleted, where the files went (deleted, or moved to a trash)
and what the store keeps of them (versioning, soft delete), and whether an undo can bring them
back now (UNDO: no once it was undone, or its trash purged).`,
		Args: exactArgs(1, "one TABLE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := sf.openTable(cmd, args[0])
			if err != nil {
				return err
			}
			runs, err := t.Runs(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				if runs == nil {
					runs = []dvrun.RunInfo{}
				}
				return writeJSON(cmd.OutOrStdout(), runs)
			}
			printRuns(cmd.OutOrStdout(), t.Location, runs)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document on standard output")
	sf.add(cmd)
	return cmd
}

func printRuns(w io.Writer, table string, runs []dvrun.RunInfo) {
	if len(runs) == 0 {
		fmt.Fprintf(w, "No run records in %s.\n", displayPath(table))
		return
	}
	fmt.Fprintf(w, "%-27s %-17s %-8s %10s %12s  %-24s %s\n", "RUN", "STATE", "MODE", "FILES", "BYTES", "KEPT BY", "UNDO")
	for _, r := range runs {
		if r.Err != "" {
			fmt.Fprintf(w, "%-27s %-17s %s\n", r.ID, r.State, displayPath(r.Err))
			continue
		}
		kept := r.Recovery.Kind
		if r.Recovery.Kind == "soft-delete" && r.Recovery.Days > 0 {
			kept = fmt.Sprintf("soft delete, %d days", r.Recovery.Days)
		}
		if r.Trash != "" {
			kept = "trash " + r.Trash
			if r.Purged != nil {
				kept = "trash, purged"
			}
		}
		mode := r.Mode
		if r.Shard != "" {
			mode += " " + displayPath(r.Shard) // one shard of a run split between workers
		}
		undoable := ""
		if r.Undo != nil {
			undoable = r.Undo.Possible
		}
		fmt.Fprintf(w, "%-27s %-17s %-8s %10d %12s  %-24s %s\n", r.ID, r.State, mode, r.NumFiles, humanBytes(r.Bytes), displayPath(kept), undoable)
		if r.State != dvrun.StateCompleted || r.Purged != nil {
			fmt.Fprintf(w, "%27s %s\n", "", displayPath(r.StateDetail))
		}
	}
}

func newUndoCmd() *cobra.Command {
	var (
		sf         sessionFlags
		runID      string
		dryRun     bool
		unfinished bool
		asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "undo TABLE",
		Short: "Restore what a VACUUM run deleted, where the store or a trash kept it",
		Long: `Restore the files a VACUUM run deleted (the newest run not undone yet, or --run ID):
moved back from the run's trash (a run made with --trash), or brought back by the store itself:
S3 and GCS versioned buckets, Azure blob soft delete and versioning, OneLake's seven days, GCS soft
delete. A file that is at its path now is never replaced. Time travel to the versions those files
served works again; a later VACUUM deletes them again unless the retention is raised first.`,
		Example: `  deltavacuum runs /data/sales
  deltavacuum undo /data/sales --dry-run
  deltavacuum undo s3://bucket/sales --run 0196f5a2-3c41-7d2e-9b1a-5c3e8f7a6b21 --json`,
		Args: exactArgs(1, "one TABLE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runID != "" && !dvrun.ValidID(runID) {
				return usagef("--run %q is not a run id (they look like %s; deltavacuum runs TABLE lists them)", runID, dvrun.IDExample)
			}
			t, err := sf.openTable(cmd, args[0])
			if err != nil {
				return err
			}
			rep, err := t.Undo(cmd.Context(), runID, undo.Options{DryRun: dryRun, Unfinished: unfinished})
			if rep != nil {
				if asJSON {
					if werr := writeJSON(cmd.OutOrStdout(), rep); werr != nil {
						return werr
					}
				} else {
					printUndo(cmd.OutOrStdout(), rep)
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&runID, "run", "", "the run to undo (default: the newest run that deleted files and was not undone)")
	f.BoolVar(&dryRun, "dry-run", false, "say what would be restored; restore nothing")
	f.BoolVar(&unfinished, "unfinished", false, "undo a run whose record says it is still running (it was killed); refused while its heartbeat is fresh (under 15 minutes old)")
	f.BoolVar(&asJSON, "json", false, "print one JSON document on standard output")
	sf.add(cmd)
	return cmd
}

func printUndo(w io.Writer, rep *dvrun.UndoReport) {
	for _, f := range rep.Files {
		if f.Outcome == dvrun.OutcomeRestored {
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", f.Outcome, displayPath(f.Path), displayPath(f.Why))
	}
	verb := "Restored"
	if rep.DryRun {
		verb = "Would restore"
	}
	// Files as the run counted them, their checksum companions apart: "4 files (+1 checksum
	// companion)" after "Deleted 4 files".
	what := filesPhrase(rep.NumRestored - rep.NumCompanions)
	if rep.NumCompanions > 0 {
		what += fmt.Sprintf(" (+%d checksum companion", rep.NumCompanions)
		if rep.NumCompanions > 1 {
			what += "s"
		}
		what += ")"
	}
	fmt.Fprintf(w, "%s %s, %s, of run %s from the %s; %d already at their path, %d not restorable, %d failed.\n",
		verb, what, humanBytes(rep.BytesRestored), rep.Run, rep.Via, rep.NumPresent, rep.NumLost, rep.NumFailed)
}

func newTrashCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trash",
		Short: "Manage the trash of runs made with vacuum --trash",
	}
	var (
		sf        sessionFlags
		folder    string
		olderThan string
		dryRun    bool
		asJSON    bool
	)
	purge := &cobra.Command{
		Use:   "purge TABLE --older-than DURATION",
		Short: "Delete for good the trash of the runs older than DURATION",
		Long: `Delete for good what vacuum --trash moved into the trash, for the runs that started more than
DURATION ago (30d, 72h, 90m; 0 empties the whole trash). Those runs can no longer be undone.`,
		Example: `  deltavacuum trash purge /data/sales --older-than 7d --dry-run`,
		Args:    exactArgs(1, "one TABLE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("older-than") {
				return usagef("--older-than DURATION is required (30d, 72h; 0 empties the whole trash)")
			}
			d, err := parseAge(olderThan)
			if err != nil {
				return usagef("--older-than %q: %v", olderThan, err)
			}
			if _, err := vacuum.TrashFolder(nil, folder); err != nil {
				return &UsageError{Err: err}
			}
			t, err := sf.openTable(cmd, args[0])
			if err != nil {
				return err
			}
			rep, err := t.PurgeTrash(cmd.Context(), folder, undo.PurgeOptions{OlderThan: d, DryRun: dryRun})
			if rep != nil {
				if asJSON {
					if werr := writeJSON(cmd.OutOrStdout(), rep); werr != nil {
						return werr
					}
				} else {
					verb := "Deleted"
					if rep.DryRun {
						verb = "Would delete"
					}
					fmt.Fprintf(cmd.OutOrStdout(), "%s %s (%s) of %s from the trash %s; %s kept.\n",
						verb, filesPhrase(rep.NumFiles), humanBytes(rep.Bytes), countPhrase(int64(len(rep.Runs)), "run", "runs"), displayPath(rep.Trash),
						countPhrase(int64(len(rep.Kept)), "younger run", "younger runs"))
					switch n := len(rep.Runs); {
					case rep.DryRun || n == 0:
					case n == 1:
						fmt.Fprintln(cmd.OutOrStdout(), "That run can no longer be undone (deltavacuum runs says so).")
					default:
						fmt.Fprintf(cmd.OutOrStdout(), "Those %d runs can no longer be undone (deltavacuum runs says so).\n", n)
					}
					for _, f := range rep.Failed {
						fmt.Fprintf(cmd.OutOrStdout(), "failed\t%s\t%s\n", displayPath(f.Path), displayPath(f.Error))
					}
				}
			}
			return err
		},
	}
	f := purge.Flags()
	f.StringVar(&folder, "trash", dvrun.DefaultTrash, "the trash folder the runs used")
	f.StringVar(&olderThan, "older-than", "", "purge the runs that started longer ago than this (30d, 72h, 90m, 0)")
	f.BoolVar(&dryRun, "dry-run", false, "say what would be deleted; delete nothing")
	f.BoolVar(&asJSON, "json", false, "print one JSON document on standard output")
	sf.add(purge)
	cmd.AddCommand(purge)
	return cmd
}

// parseAge reads a duration as Go writes them (72h, 90m) or in days (30d); never negative.
func parseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.ParseUint(n, 10, 16)
		if err != nil {
			return 0, fmt.Errorf("expected a whole number of days, such as 30d")
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("expected a duration such as 30d, 72h or 90m")
	}
	if d < 0 {
		return 0, fmt.Errorf("a duration cannot be negative")
	}
	return d, nil
}
