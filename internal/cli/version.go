package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/deltavacuum/deltavacuum/internal/buildinfo"
)

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date and Go version",
		Long: `Print the deltavacuum module version, the commit and date it was built from, and the Go
version that built it (from the build information Go embeds, or set by the release build). The
commits deltavacuum writes name the same version in their engineInfo (deltavacuum/VERSION).`,
		Args: exactArgs(0, "no argument"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), buildinfo.Get())
			}
			printVersion(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document: version, commit, date, modified, goVersion, platform")
	return cmd
}

func printVersion(w io.Writer) {
	i := buildinfo.Get()
	commit := i.Commit
	if commit == "" {
		commit = "unknown"
	}
	if i.Modified {
		commit += " (modified)"
	}
	date := i.Date
	if date == "" {
		date = "unknown"
	}
	fmt.Fprintf(w, "deltavacuum %s\ncommit: %s\nbuilt: %s\ngo: %s %s\n", i.Version, commit, date, i.GoVersion, i.Platform)
}
