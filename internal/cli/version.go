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
		Long: `Print the deltavacuum version, the commit and date it was built from, and the Go version that
built it. make build, the release binaries, the container image and the Python package of one
commit name one version: v0.1.0-dev.287+g6ecb83c is the 287th commit, 6ecb83c, on the way to
v0.1.0 (the Python package spells it 0.1.0.dev287+g6ecb83c and the image tag
v0.1.0-dev.287-g6ecb83c, as their formats require); at a release tag it is the tag, v1.2.3. A
plain go build names what Go embeds instead (a pseudo-version, or devel). The commits
deltavacuum writes name the same version in their engineInfo (deltavacuum/VERSION).`,
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
