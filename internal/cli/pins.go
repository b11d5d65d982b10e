package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/deltavacuum/deltavacuum/internal/redact"
	dvrun "github.com/deltavacuum/deltavacuum/run"
)

// pinsHelp says what a pin is, and what honours it.
const pinsHelp = `A pin keeps a version of the table readable for a reader that storage does not show: a
notebook that will time-travel to last month's version, a report that must reproduce last
quarter's figures, a job that started three hours ago. Every VACUUM of deltavacuum then keeps
every snapshot from that version to the newest (each file a commit after it names), whatever
the retention, until the pin ends. A pin is a small file under _deltavacuum/pins/ in the table,
written under the table's lock; it holds at most --max-pin (30 days by default), and one dated
in the future or longer than that refuses every run until it is removed.

Only deltavacuum honours pins: a VACUUM by Spark, Databricks or delta-rs of the same table does
not (deltavacuum inspect warns when the table's history shows one ran).`

// withJSONError makes a RunE print one JSON document for a failure when --json is set.
func withJSONError(asJSON *bool, run func(cmd *cobra.Command, args []string) error) func(cmd *cobra.Command, args []string) error {
	return func(cmd *cobra.Command, args []string) error {
		err := run(cmd, args)
		if err != nil && *asJSON {
			table := ""
			if len(args) > 0 {
				table = redact.FromContext(cmd.Context()).String(args[0])
			}
			_ = writeJSON(cmd.OutOrStdout(), jsonError{Table: table, Error: err.Error(), ExitCode: exitCode(context.Background(), err)})
		}
		return err
	}
}

func newPinCmd() *cobra.Command {
	var (
		sf        sessionFlags
		version   int64
		timestamp string
		forArg    string
		reason    string
		maxPin    string
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "pin TABLE (--version V | --timestamp T) --for DURATION --reason TEXT",
		Short: "Keep a version of the table readable for a reader VACUUM cannot see",
		Long:  pinsHelp,
		Example: `  deltavacuum pin /data/sales --version 812 --for 7d --reason "Q3 audit, finance"
  deltavacuum pin s3://bucket/sales --timestamp 2026-11-30T00:00:00Z --for 36h --reason "month-end report" --json`,
		Args: exactArgs(1, "one TABLE"),
	}
	cmd.RunE = withJSONError(&asJSON, func(cmd *cobra.Command, args []string) error {
		var req dvrun.PinRequest
		switch v, ts := cmd.Flags().Changed("version"), timestamp != ""; {
		case v == ts:
			return usagef("give the version to pin with --version V or --timestamp T (RFC 3339), one of them")
		case v:
			if version < 0 {
				return usagef("--version %d: a table version is 0 or more", version)
			}
			req.Version = &version
		default:
			at, err := time.Parse(time.RFC3339, timestamp)
			if err != nil {
				return usagef("--timestamp %q: expected a time such as 2026-11-30T00:00:00Z", timestamp)
			}
			req.Timestamp = &at
		}
		if forArg == "" {
			return usagef("--for DURATION is required: how long the reader needs the version (6h, 7d)")
		}
		d, err := parseAge(forArg)
		if err != nil || d == 0 {
			return usagef("--for %q: expected a duration such as 6h or 7d", forArg)
		}
		req.For, req.Reason = d, reason
		if err := dvrun.CheckReason(reason); err != nil {
			return &UsageError{Err: err}
		}
		if req.MaxPin, err = parseMaxPin(maxPin); err != nil {
			return err
		}
		t, err := sf.openTable(cmd, args[0])
		if err != nil {
			return err
		}
		pin, err := t.Pin(cmd.Context(), req)
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(cmd.OutOrStdout(), pin)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "Pinned version %d of %s until %s: %s\nPin %s; deltavacuum unpin %s %s removes it.\n",
			pin.Version, displayPath(pin.Table), pin.Until.UTC().Format(time.RFC3339), pin.Reason, pin.ID, displayPath(pin.Table), pin.ID)
		return nil
	})
	f := cmd.Flags()
	f.Int64Var(&version, "version", 0, "the table version `V` to keep readable")
	f.StringVar(&timestamp, "timestamp", "", "or the version the table had at `T` (RFC 3339), as time travel reads it")
	f.StringVar(&forArg, "for", "", "how long the pin holds: `DURATION` such as 6h or 7d")
	f.StringVar(&reason, "reason", "", "who needs the version, and why (shown by pins, inspect, DRY RUN)")
	f.StringVar(&maxPin, "max-pin", "", "the longest pin accepted (default 30d)")
	f.BoolVar(&asJSON, "json", false, "print one JSON document on standard output")
	sf.add(cmd)
	return cmd
}

func newPinsCmd() *cobra.Command {
	var (
		sf     sessionFlags
		asJSON bool
		maxPin string
	)
	cmd := &cobra.Command{
		Use:     "pins TABLE",
		Short:   "List the pins of a table",
		Long:    pinsHelp,
		Example: `  deltavacuum pins /data/sales --json`,
		Args:    exactArgs(1, "one TABLE"),
	}
	cmd.RunE = withJSONError(&asJSON, func(cmd *cobra.Command, args []string) error {
		mp, err := parseMaxPin(maxPin)
		if err != nil {
			return err
		}
		t, err := sf.openTable(cmd, args[0])
		if err != nil {
			return err
		}
		pins, err := t.Pins(cmd.Context(), time.Now(), mp)
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(cmd.OutOrStdout(), struct {
				Table string           `json:"table"`
				Pins  []dvrun.PinState `json:"pins"`
			}{t.Location, pins})
		}
		printPins(cmd.OutOrStdout(), t.Location, pins)
		return nil
	})
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document on standard output")
	cmd.Flags().StringVar(&maxPin, "max-pin", "", "the longest pin honoured (default 30d)")
	sf.add(cmd)
	return cmd
}

func printPins(w io.Writer, table string, pins []dvrun.PinState) {
	if len(pins) == 0 {
		fmt.Fprintf(w, "%s has no pins.\n", displayPath(table))
		return
	}
	fmt.Fprintln(w, "PIN\tVERSION\tUNTIL\tSTATE\tREASON")
	for _, p := range pins {
		if p.State == dvrun.PinInvalid {
			fmt.Fprintf(w, "%s\t-\t-\tinvalid\t%s (every VACUUM refuses until it is removed)\n", displayPath(p.Key), displayPath(p.Why))
			continue
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\n", p.ID, p.Version, p.Until.UTC().Format(time.RFC3339), p.State, displayPath(p.Reason))
	}
}

func newUnpinCmd() *cobra.Command {
	var (
		sf     sessionFlags
		asJSON bool
		id     string
	)
	cmd := &cobra.Command{
		Use:   "unpin TABLE PIN",
		Short: "Remove a pin of a table",
		Long:  pinsHelp,
		Example: `  deltavacuum unpin /data/sales 0196f5a2-3c41-7d2e-9b1a-5c3e8f7a6b21
  deltavacuum unpin /data/sales --id 0196f5a2-3c41-7d2e-9b1a-5c3e8f7a6b21 --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if id != "" {
				return exactArgs(1, "one TABLE (the pin is --id)")(cmd, args)
			}
			return exactArgs(2, "TABLE and PIN")(cmd, args)
		},
	}
	cmd.RunE = withJSONError(&asJSON, func(cmd *cobra.Command, args []string) error {
		if id == "" {
			id = args[1]
		}
		args = []string{args[0], id}
		t, err := sf.openTable(cmd, args[0])
		if err != nil {
			return err
		}
		if err := t.Unpin(cmd.Context(), args[1]); err != nil {
			if errors.Is(err, dvrun.ErrInvalidPin) {
				return &UsageError{Err: err}
			}
			return err
		}
		if asJSON {
			return writeJSON(cmd.OutOrStdout(), map[string]any{"table": t.Location, "unpinned": args[1]})
		}
		fmt.Fprintf(cmd.OutOrStdout(), "Removed the pin %s of %s.\n", args[1], displayPath(t.Location))
		return nil
	})
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document on standard output")
	cmd.Flags().StringVar(&id, "id", "", "the `PIN` to remove (instead of the second argument)")
	sf.add(cmd)
	return cmd
}

// parseMaxPin reads --max-pin: 0 (the default, run.DefaultMaxPin) when not given.
func parseMaxPin(arg string) (time.Duration, error) {
	if arg == "" {
		return 0, nil
	}
	d, err := parseAge(arg)
	if err != nil || d == 0 {
		return 0, usagef("--max-pin %q: expected a duration such as 30d", arg)
	}
	return d, nil
}
