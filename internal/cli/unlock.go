package cli

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	dvrun "github.com/deltavacuum/deltavacuum/run"
)

func newUnlockCmd() *cobra.Command {
	var (
		sf     sessionFlags
		force  bool
		dryRun bool
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "unlock TABLE",
		Short: "Release the table's lock left by a process that died",
		Long: `Every command that changes a table (vacuum, sql VACUUM, undo, trash purge, the service) first
takes the table's lock: a ticket under _deltavacuum/lock/ in the table, written with the store's
put-if-absent and kept fresh by a heartbeat every minute. A process that dies leaves its ticket.
The next run on the same host takes it over at once when that process is gone; from another host,
after the stale limit (15 minutes without a heartbeat).

unlock shows what each open ticket held (the command, run, host, process and last heartbeat) and
releases those of processes that are gone, without a heartbeat for the stale limit, unreadable, or
dated ahead of this clock. A live holder is kept unless --force (its run then stops at its next
heartbeat). For the run a released ticket held, if it kept a record, unlock says what to do:
deltavacuum undo TABLE --unfinished --run ID where the store or its trash keeps what it deleted,
VACUUM again where nothing does.`,
		Example: `  deltavacuum unlock /data/sales
  deltavacuum unlock s3://bucket/sales --dry-run --json`,
		Args: exactArgs(1, "one TABLE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := sf.openTable(cmd, args[0])
			if err != nil {
				return err
			}
			rep, err := t.Unlock(cmd.Context(), dvrun.UnlockOptions{Force: force, DryRun: dryRun})
			if rep != nil {
				if asJSON {
					if werr := writeJSON(cmd.OutOrStdout(), rep); werr != nil {
						return werr
					}
				} else {
					printUnlock(cmd.OutOrStdout(), rep)
				}
			}
			if errors.Is(err, dvrun.ErrLocked) {
				return fmt.Errorf("%w; nothing of theirs was changed", err)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.BoolVar(&force, "force", false, "release live tickets too (their runs stop at their next heartbeat)")
	f.BoolVar(&dryRun, "dry-run", false, "show the tickets and what would be released; release nothing")
	f.BoolVar(&asJSON, "json", false, "print one JSON document on standard output")
	sf.add(cmd)
	return cmd
}

func printUnlock(w io.Writer, rep *dvrun.UnlockReport) {
	if len(rep.Tickets) == 0 {
		fmt.Fprintf(w, "%s is not locked: no open ticket.\n", displayPath(rep.Table))
		return
	}
	released := 0
	for _, u := range rep.Tickets {
		action := "released"
		if rep.DryRun {
			action = "would release"
		}
		if !u.Released {
			action = "kept: " + u.Kept
		} else {
			released++
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", u.Key, u.State, displayPath(holderOf(u.Holding)), displayPath(action))
		if u.Why != "" && u.Released {
			fmt.Fprintf(w, "\t%s\n", displayPath(u.Why))
		}
		if u.RunNote != "" {
			fmt.Fprintf(w, "\t%s\n", displayPath(u.RunNote))
		}
	}
	verb := "Released"
	if rep.DryRun {
		verb = "Would release"
	}
	fmt.Fprintf(w, "%s %d of %d open tickets of %s.\n", verb, released, len(rep.Tickets), displayPath(rep.Table))
}

// holderOf is who held a ticket, in one phrase.
func holderOf(h dvrun.Holding) string {
	t := h.Ticket
	if t == nil {
		return "unreadable"
	}
	s := t.Purpose
	if t.Run != "" {
		s += " run " + t.Run
	}
	if t.Shard != "" {
		s += " shard " + t.Shard
	}
	return fmt.Sprintf("%s, pid %d on %s, started %s, last sign %s", s, t.PID, t.Host, t.StartedAt.UTC().Format(time.RFC3339), h.LastSign.UTC().Format(time.RFC3339))
}
