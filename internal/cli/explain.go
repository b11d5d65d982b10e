package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/deltavacuum/deltavacuum/insight"
)

func newExplainCmd() *cobra.Command {
	var (
		sf          sessionFlags
		retainHours float64
		asJSON      bool
	)
	cmd := &cobra.Command{
		Use:   "explain TABLE PATH...",
		Short: "Say what VACUUM does with each path, by which rule and on what evidence",
		Long: `Say, for each PATH, what a VACUUM of TABLE run now would do with it (kept, would delete, not in
the table), the rule that decides it and the evidence: the version that added a live file, the
remove of a tombstone and when it may be deleted, the live file a deletion vector belongs to,
the hidden folder, the modification time. The rules are the planner's own: explain makes the
same plan a DRY RUN makes (one listing of the table) and reads its verdicts.

A PATH is relative to the table root (part-0.parquet, date=2024-01-01/part-1.parquet, a folder),
as stored (not percent-encoded), or the table's location followed by one. Deletes nothing.`,
		Example: `  deltavacuum explain /data/sales part-00000-1c2d.snappy.parquet _delta_log/00000000000000000003.json
  deltavacuum explain /data/sales date=2024-01-01/ --retain-hours 24 --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usagef("%s expects TABLE and at least one PATH (got %d arguments); see %s --help", cmd.CommandPath(), len(args), cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := sf.session()
			if err != nil {
				return err
			}
			var retain *float64
			if cmd.Flags().Changed("retain-hours") {
				retain = &retainHours
			}
			t, err := s.OpenArg(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			x, err := s.Explain(cmd.Context(), t, args[1:], retain)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), x)
			}
			printExplained(cmd.OutOrStdout(), x)
			return nil
		},
	}
	cmd.Flags().Float64Var(&retainHours, "retain-hours", 0, "retention of the VACUUM explained (RETAIN n HOURS); default the table's")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	sf.add(cmd)
	return cmd
}

func printExplained(w io.Writer, x *insight.Explained) {
	fmt.Fprintf(w, "Table %s, version %d, retention %g hours, cutoff %s\n", displayPath(x.Table), x.Version, x.RetentionHours, stamp(x.Cutoff))
	for _, e := range x.Paths {
		fmt.Fprintf(w, "%s\t%s\n", displayPath(e.Path), displayPath(e.Text))
	}
}
