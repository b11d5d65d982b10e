package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/deltavacuum/deltavacuum/internal/nearest"
	"github.com/deltavacuum/deltavacuum/storage/location"
)

// Shell completion of flag values (deltavacuum completion bash|zsh|fish|powershell): the words
// a flag takes, as its parser takes them.

// completeWords completes a flag whose value is one of words.
func completeWords(words ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return words, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeKeys completes a KEY=VALUE flag with its keys, "=" included and no space after, so
// that the user types the value next.
func completeKeys(keys []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if strings.Contains(toComplete, "=") {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		out := make([]string, 0, len(keys))
		for _, k := range keys {
			out = append(out, k+"=")
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// storageOptionNames are the canonical --storage-option keys, refused ones left out.
func storageOptionNames() []string {
	var out []string
	for _, k := range location.Keys {
		if k.Refused == "" {
			out = append(out, k.Name)
		}
	}
	return out
}

// Values of the flags that take one of a few words, as their parsers take them.
var (
	progressModes    = []string{"auto", "json", "none"}
	inventoryFormats = []string{"auto", "delta", "parquet", "csv", "azure", "s3"}
	logLevels        = []string{"debug", "info", "warn", "error"}
)

// suggestFlag is the flag of cmd nearest to the unknown flag an error of pflag names ("unknown
// flag: --retian-hours"), or "" when none is near: cobra suggests commands, not flags.
func suggestFlag(cmd *cobra.Command, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return ""
	}
	name, _, _ = strings.Cut(name, "=")
	var names, prefixed []string
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		names = append(names, f.Name)
		if len(name) >= 3 && strings.HasPrefix(f.Name, name) {
			prefixed = append(prefixed, f.Name)
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	if near := nearest.Name(name, names); near != "" {
		return near
	}
	if len(prefixed) == 1 { // the start of one flag's name
		return prefixed[0]
	}
	return ""
}
