// Package cli is the command line of deltavacuum: flags, output and exit codes. It renders the
// results of the library; it decides nothing about what is deleted.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1 // refused or failed
	ExitUsage   = 2
)

// UsageError marks an error in how the command was called.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// Run runs the command line with args (without the program name) and returns the exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(stderr, "deltavacuum: "+err.Error())
	var ue *UsageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	if strings.HasPrefix(err.Error(), "unknown command") || strings.HasPrefix(err.Error(), "unknown flag") ||
		strings.HasPrefix(err.Error(), "unknown shorthand flag") || strings.Contains(err.Error(), "accepts ") {
		return ExitUsage
	}
	return ExitFailure
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "deltavacuum",
		Short:         "Delta Lake VACUUM without Spark",
		Long:          "deltavacuum removes the data files a Delta table no longer references and that are older than its retention.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &UsageError{Err: fmt.Errorf("%w (see %s --help)", err, c.CommandPath())}
	})
	root.AddCommand(newVacuumCmd(), newSQLCmd(), newHistoryCmd(), newDemoCmd())
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
