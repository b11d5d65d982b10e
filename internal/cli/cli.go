// Package cli is the command line of deltavacuum: flags, output and exit codes. It renders the
// results of the library; it decides nothing about what is deleted.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deltavacuum/deltavacuum/catalog"
	"github.com/deltavacuum/deltavacuum/internal/buildinfo"
	"github.com/deltavacuum/deltavacuum/internal/redact"
	dvrun "github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/sql"
	"github.com/deltavacuum/deltavacuum/storage/location"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// Exit codes, as users of restic and rclone expect them (docs/cli.md, "Exit status").
const (
	ExitOK          = 0
	ExitFailure     = 1   // refused or failed: nothing, or not everything planned, was done
	ExitUsage       = 2   // the command was called wrongly: a flag, an argument
	ExitPartial     = 3   // the run went through, but some deletes (or moves, restores) failed
	ExitInterrupted = 130 // interrupted by a signal (SIGINT, SIGTERM) before it finished
)

// exitCodesHelp is the paragraph the root command's help ends with.
const exitCodesHelp = `Exit status: 0 success; 1 refused or failed (standard error says why and what to do);
2 usage error (a flag or argument, also --retain-hours below 0); 3 partial failure (some files
could not be deleted: the run's output lists them, run it again); 130 interrupted.`

// UsageError marks an error in how the command was called.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// Run runs the command line with args (without the program name) and returns the exit code.
//
// Everything it prints, on stdout and stderr (results, echoed statements, warnings, progress
// events, errors), passes through one redact.Writer each: the secrets of the run (see
// registerSecrets) and whatever looks like one are printed as redact.Mask.
//
// A first argument --args-fd N or --args-env NAME merges in the private arguments (private.go):
// the secrets a program that runs deltavacuum keeps off the command line.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	r := redact.New()
	merged, err := expandPrivateArgs(args, osPrivateSource)
	if err != nil {
		registerSecrets(r, args, os.Getenv)
		errw := r.Writer(stderr)
		fmt.Fprintln(errw, "deltavacuum: "+err.Error())
		errw.Flush()
		return ExitUsage
	}
	args = merged
	registerSecrets(r, args, os.Getenv)
	out, errw := r.Writer(stdout), r.Writer(stderr)
	code := execute(redact.NewContext(ctx, r), args, stdin, out, errw)
	out.Flush()
	errw.Flush()
	return code
}

func execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out := &countingWriter{w: stdout}
	root := newRoot(stdin, out, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	msg := errorText(ctx, err)
	fmt.Fprintln(stderr, "deltavacuum: "+msg)
	code := exitCode(ctx, err)
	if out.n == 0 && wantsJSON(args) {
		// --json promises one JSON document for every failure: one the command did not get to
		// print (a mistyped flag, a wrong argument, a refusal before any result) is this one.
		_ = writeJSON(stdout, jsonError{Error: msg, ExitCode: code})
	}
	return code
}

// errorText is err as the command line says it: an interrupt in words, not in Go's
// ("context canceled").
func errorText(ctx context.Context, err error) string {
	msg := err.Error()
	if ctx.Err() == nil || !errors.Is(err, context.Canceled) {
		return msg
	}
	msg = strings.ReplaceAll(msg, ": context canceled", "")
	msg = strings.ReplaceAll(msg, "context canceled", "interrupted")
	if !strings.Contains(msg, "interrupted") {
		msg = "interrupted: " + msg
	}
	return msg
}

// wantsJSON reports whether the command line asks for --json (before a "--", after which every
// argument is a name).
func wantsJSON(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "--json=true", "--json=1", "--json=t", "--json=TRUE", "--json=True":
			return true
		}
	}
	return false
}

// countingWriter counts the bytes a command wrote on standard output.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Unwrap gives the writer below (isTerminal looks through it).
func (c *countingWriter) Unwrap() io.Writer { return c.w }

// exitCode is the exit status of a command that returned err.
func exitCode(ctx context.Context, err error) int {
	var ue *UsageError
	switch {
	case errors.As(err, &ue), errors.Is(err, dvrun.ErrInvalidRequest):
		// A request wrong whatever the table (run.Request.Validate: a retention that is no
		// number of hours, a shard without its version, an inventory with LITE, ...).
		return ExitUsage
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.Is(err, vacuum.ErrPartialFailure):
		return ExitPartial
	}
	if strings.HasPrefix(err.Error(), "unknown command") || strings.HasPrefix(err.Error(), "unknown flag") ||
		strings.HasPrefix(err.Error(), "unknown shorthand flag") || strings.Contains(err.Error(), "accepts ") {
		return ExitUsage
	}
	return ExitFailure
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "deltavacuum",
		Short: "Delta Lake VACUUM without Spark",
		Long: "deltavacuum removes the data files a Delta table no longer references and that are older than its retention.\n\n" +
			tableHelp + "\n\n" + exitCodesHelp + "\n\nShell completion: deltavacuum completion bash|zsh|fish|powershell --help.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildinfo.Get().Version,
	}
	var v strings.Builder
	printVersion(&v)
	root.SetVersionTemplate(strings.ReplaceAll(v.String(), "{{", "")) // --version prints what version prints
	addLogFlags(root, stderr)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if near := suggestFlag(c, err); near != "" {
			return &UsageError{Err: fmt.Errorf("%w: did you mean --%s? (see %s --help)", err, near, c.CommandPath())}
		}
		return &UsageError{Err: fmt.Errorf("%w (see %s --help)", err, c.CommandPath())}
	})
	root.AddCommand(newVacuumCmd(), newInspectCmd(), newExplainCmd(), newSQLCmd(), newHistoryCmd(), newRunsCmd(), newUndoCmd(), newTrashCmd(), newUnlockCmd(), newPinCmd(), newPinsCmd(), newUnpinCmd(), newStorageOptionsCmd(), newDemoCmd(), newServeCmd(), newVersionCmd())
	return root
}

// exactArgs is cobra.ExactArgs returning a usage error.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s expects %s (got %d arguments); see %s --help", cmd.CommandPath(), what, len(args), cmd.CommandPath())
		}
		return nil
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// parseBool parses a Spark boolean setting value.
func parseBool(key, v string) (bool, error) {
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return false, usagef("%s must be true or false, got %q", key, v)
	}
	return b, nil
}

// registerSecrets tells r the secrets a run may know before its flags are parsed: the
// environment variables of the secret storage options and those the SDKs read themselves,
// the password and query of the URIs in the environment (endpoints, the warehouse), and in the
// arguments: every URI, and the value of every KEY=VALUE whose key is a secret storage option
// or a sensitive setting. The commands add the rest as they learn it (sessionFlags.session,
// registerStatements). It errs on the side of registering: a value registered that is not a
// secret only prints masked.
func registerSecrets(r *redact.Redactor, args []string, getenv func(string) string) {
	for _, k := range location.Keys {
		for _, e := range k.Env {
			registerOption(r, k.Name, getenv(e))
		}
	}
	for _, e := range location.SDKSecretEnv {
		r.Add(getenv(e))
	}
	r.AddURI(getenv(catalog.EnvWarehouse))
	for _, a := range args {
		r.AddURI(a)
		if strings.HasPrefix(a, "-") {
			_, a, _ = strings.Cut(a, "=") // --flag=VALUE
			r.AddURI(a)
		}
		if k, v, ok := strings.Cut(a, "="); ok && k != "" && !strings.ContainsAny(k, " \t\r\n") { // KEY=VALUE, not a SQL script
			if name, known := location.Canonical(k); known {
				registerOption(r, name, v)
			} else if redact.SensitiveKey(k) {
				r.Add(v)
			}
		}
	}
}

// registerOption registers the value of a storage option: all of it for a secret option,
// the password and query of a URI (an endpoint) for the others.
func registerOption(r *redact.Redactor, name, value string) {
	for _, k := range location.Keys {
		if k.Name == name && k.Secret {
			r.Add(value)
			return
		}
	}
	r.AddURI(value)
}

// registerStatements registers the secrets of SQL statements: the values SET and ALTER TABLE
// give to sensitive keys, and the password and query of every table and inventory location.
func registerStatements(r *redact.Redactor, stmts []sql.Statement) {
	ref := func(t *sql.TableRef) {
		if t != nil {
			r.AddURI(t.Path)
		}
	}
	for _, st := range stmts {
		switch st := st.(type) {
		case *sql.Set:
			if st.Value != nil && redact.SensitiveKey(st.Key) {
				r.Add(*st.Value)
			}
		case *sql.AlterTableSetProperties:
			ref(&st.Table)
			for _, p := range st.Properties {
				if redact.SensitiveKey(p.Key) {
					r.Add(p.Value)
				}
			}
		case *sql.Vacuum:
			ref(&st.Table)
			if inv := st.Inventory; inv != nil {
				ref(inv.Table)
				if inv.Query != nil {
					ref(&inv.Query.From)
				}
			}
		case *sql.AlterTableUnsetProperties:
			ref(&st.Table)
		case *sql.ShowTblProperties:
			ref(&st.Table)
		case *sql.DescribeHistory:
			ref(&st.Table)
		case *sql.DescribeDetail:
			ref(&st.Table)
		case *sql.Inspect:
			ref(&st.Table)
		case *sql.ExplainVacuum:
			ref(&st.Table)
		}
	}
}
