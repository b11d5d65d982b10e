package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/deltavacuum/deltavacuum/session"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/redact"
	"github.com/deltavacuum/deltavacuum/sql"
)

func newSQLCmd() *cobra.Command {
	var (
		sf     sessionFlags
		file   string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "sql [STATEMENTS]",
		Short: "Run VACUUM, SET, ALTER TABLE, SHOW TBLPROPERTIES, SHOW TABLES and DESCRIBE statements as in Spark SQL (and INSPECT, EXPLAIN VACUUM)",
		Long: `Run statements as a Fabric or Databricks notebook runs them, separated by ';', from the
argument, from -f FILE, or from standard input:

  VACUUM table [LITE|FULL] [USING INVENTORY inv] [RETAIN n HOURS] [DRY RUN]
  SET key = value | SET key | SET | RESET [key]
  ALTER TABLE table SET TBLPROPERTIES ('key' = 'value', ...)
  ALTER TABLE table UNSET TBLPROPERTIES [IF EXISTS] ('key', ...)
  SHOW TBLPROPERTIES table [('key')]
  SHOW TABLES [IN schema]            (the tables of the --warehouse lakehouse, named as Fabric shows them)
  DESCRIBE HISTORY table [LIMIT n]
  DESCRIBE DETAIL table              (with the reclaimable figures of a DRY RUN)
  INSPECT table [LITE] [RETAIN n HOURS]                       (deltavacuum extension)
  EXPLAIN VACUUM table [RETAIN n HOURS] PATHS ('path', ...)   (deltavacuum extension)

A table is a name (t, schema.t, catalog.schema.t, resolved with --warehouse or --catalog),
a quoted path ('/data/t'), or delta.` + "`/data/t`" + `. An unquoted name is always a name,
as a bare word is for deltavacuum vacuum when a warehouse or catalog is given; names are
case-insensitive (sales.orders finds Tables/sales/Orders).

` + exitCodesHelp,
		Example: `  deltavacuum sql "SET spark.databricks.delta.retentionDurationCheck.enabled = false; VACUUM '/data/t' RETAIN 0 HOURS DRY RUN"
  deltavacuum sql --warehouse /lakehouse "ALTER TABLE sales.orders SET TBLPROPERTIES ('delta.deletedFileRetentionDuration' = 'interval 3 days')"
  deltavacuum sql -f maintenance.sql --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("sql takes the statements as one argument (quote them); got %d arguments", len(args))
			}
			if len(args) == 1 && file != "" {
				return usagef("give the statements either as an argument or with -f, not both")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var script string
			switch {
			case len(args) == 1:
				script = args[0]
			case file != "":
				b, err := os.ReadFile(file)
				if err != nil {
					return err
				}
				script = string(b)
			default:
				b, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return err
				}
				script = string(b)
			}
			stmts, err := sql.ParseScript(script)
			if err != nil {
				err = &UsageError{Err: err}
				if asJSON {
					writeJSONError(cmd.OutOrStdout(), nil, "", err)
				}
				return err
			}
			registerStatements(redact.FromContext(cmd.Context()), stmts)
			if len(stmts) == 0 {
				return usagef("no statement given")
			}
			s, err := sf.session()
			if err != nil {
				if asJSON {
					writeJSONError(cmd.OutOrStdout(), nil, "", err)
				}
				return err
			}
			for _, st := range stmts {
				r, err := s.Exec(cmd.Context(), st)
				err = retentionHint(err, true)
				if err != nil && asJSON {
					writeJSONError(cmd.OutOrStdout(), r, st.String(), err)
					return fmt.Errorf("%s\n  %w", st.String(), err)
				}
				if r != nil {
					if asJSON {
						if werr := writeJSON(cmd.OutOrStdout(), r); werr != nil {
							return werr
						}
					} else if werr := printStatement(cmd.OutOrStdout(), cmd.ErrOrStderr(), r); werr != nil {
						return werr
					}
				}
				if err != nil {
					return fmt.Errorf("%s\n  %w", st.String(), err)
				}
			}
			return nil
		},
	}
	sf.add(cmd, vacuumSettings...)
	cmd.Flags().StringVarP(&file, "file", "f", "", "read the statements from FILE")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document per statement; a statement that fails prints {\"statement\": …, \"error\": …} and ends the script")
	return cmd
}

func newHistoryCmd() *cobra.Command {
	var (
		sf     sessionFlags
		limit  int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "history TABLE",
		Short: "Show the table history (DESCRIBE HISTORY)",
		Long:  "Show the commits of a Delta table, newest first, as DESCRIBE HISTORY does.\n\n" + tableHelp,
		Args:  exactArgs(1, "one TABLE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := sf.openTable(cmd, args[0])
			if err != nil {
				return historyOfNonTable(err)
			}
			// The table opened, not its location opened again: t.Location is safe to print,
			// and so has lost the credentials of the argument (a SAS in its query).
			st := &sql.DescribeHistory{Table: sql.TableRef{Path: t.Location}}
			if limit > 0 {
				st.Limit = &limit
			}
			history, err := deltalog.History(cmd.Context(), t.Store, limit)
			if err != nil {
				return historyOfNonTable(err)
			}
			r := &session.Result{Statement: st.String(), Kind: "DESCRIBE HISTORY", Table: t.Location, History: history}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), r)
			}
			return printStatement(cmd.OutOrStdout(), cmd.ErrOrStderr(), r)
		},
	}
	sf.add(cmd)
	cmd.Flags().IntVar(&limit, "limit", 0, "show at most N versions, newest first")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

// historyOfNonTable words the refusal of a location that is not a Delta table for history,
// which is not VACUUM.
func historyOfNonTable(err error) error {
	var nt *deltalog.NotTableError
	if errors.As(err, &nt) {
		msg := "`" + nt.Location + "` is not a Delta table, so it has no history (DESCRIBE HISTORY reads the commits of a _delta_log)"
		if nt.Detail != "" {
			msg += " (" + nt.Detail + ")"
		}
		return &notTableError{msg: msg}
	}
	return err
}

// notTableError is a refusal worded for the command at hand; it matches deltalog.ErrNotDeltaTable.
type notTableError struct{ msg string }

func (e *notTableError) Error() string        { return e.msg }
func (e *notTableError) Is(target error) bool { return target == deltalog.ErrNotDeltaTable }

// jsonError is what a command with --json prints on standard output when it fails.
type jsonError struct {
	Statement string `json:"statement,omitempty"`
	Table     string `json:"table,omitempty"`
	Error     string `json:"error"`
	ExitCode  int    `json:"exitCode"`
}

// writeJSONError prints the one JSON document of a failed statement: what it had done (r,
// when there is one) with "error" and "exitCode" added.
func writeJSONError(w io.Writer, r *session.Result, statement string, err error) {
	doc := map[string]any{}
	if r != nil {
		if b, merr := json.Marshal(r); merr == nil {
			_ = json.Unmarshal(b, &doc)
		}
	}
	if statement != "" {
		doc["statement"] = statement
	}
	doc["error"], doc["exitCode"] = err.Error(), exitCode(context.Background(), err)
	_ = writeJSON(w, doc)
}
