package cli

import (
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"
)

// addLogFlags adds -q, -v and --log-level: the level of the diagnostics the run writes to
// standard error through log/slog (what the SDKs say, such as the AWS SDK's retries and
// warnings, at info and debug). The results and the errors of a command are not diagnostics:
// -q does not hide them.
func addLogFlags(root *cobra.Command, stderr io.Writer) {
	var (
		level          string
		quiet, verbose bool
	)
	f := root.PersistentFlags()
	f.StringVar(&level, "log-level", "warn", "diagnostics on standard error: "+strings.Join(logLevels[:len(logLevels)-1], ", ")+" or "+logLevels[len(logLevels)-1])
	f.BoolVarP(&quiet, "quiet", "q", false, "diagnostics: errors only (--log-level error)")
	f.BoolVarP(&verbose, "verbose", "v", false, "diagnostics: everything (--log-level debug)")
	_ = root.RegisterFlagCompletionFunc("log-level", completeWords(logLevels...))
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		var l slog.Level
		switch {
		case quiet && verbose:
			return usagef("-q and -v exclude each other")
		case quiet:
			l = slog.LevelError
		case verbose:
			l = slog.LevelDebug
		default:
			name := strings.ToUpper(strings.TrimSpace(level))
			if name == "WARNING" {
				name = "WARN"
			}
			if err := l.UnmarshalText([]byte(name)); err != nil || !knownLevel(level) {
				return usagef("--log-level must be debug, info, warn or error, got %q", level)
			}
		}
		slog.SetDefault(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: l})))
		return nil
	}
}

func knownLevel(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug", "info", "warn", "warning", "error":
		return true
	}
	return false
}
