package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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
	best, bestDist := "", 0
	var prefixed []string
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if len(name) >= 3 && strings.HasPrefix(f.Name, name) {
			prefixed = append(prefixed, f.Name)
		}
		d := editDistance(name, f.Name)
		if best == "" || d < bestDist || (d == bestDist && f.Name < best) {
			best, bestDist = f.Name, d
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	switch {
	case best != "" && bestDist <= max(1, min(3, len(name)/3)): // a slip of a key or two (a swap is two)
		return best
	case len(prefixed) == 1: // the start of one flag's name
		return prefixed[0]
	}
	return ""
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
