package cli

import (
	"fmt"
	"io"
	"sort"
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

// newStorageOptionsHelp is the topic of `deltavacuum help storage-options`: every --storage-option key,
// its other spellings and the environment variables read when it is not given, by store.
func newStorageOptionsHelp() *cobra.Command {
	var b strings.Builder
	printStorageOptions(&b)
	// No Run: a help topic, listed under "Additional help topics".
	return &cobra.Command{
		Use:   "storage-options",
		Short: "The --storage-option keys of each object store, and their environment variables",
		Long:  strings.TrimRight(b.String(), "\n"),
	}
}

func printStorageOptions(w io.Writer) {
	fmt.Fprintln(w, "--storage-option KEY=VALUE configures the object store of a table; a key not given is read from")
	fmt.Fprintln(w, "the environment variables named beside it. Keys are case-insensitive; the other spellings are")
	fmt.Fprintln(w, "those of delta-rs and object_store.")
	titles := map[string]string{"s3": "Amazon S3 and S3-compatible stores (s3://, s3a://)", "azure": "Azure Blob Storage, ADLS Gen2 and OneLake (abfss://, wasbs://, az://)",
		"gcs": "Google Cloud Storage (gs://)", "all": "Every store"}
	var groups []string
	byGroup := map[string][]location.Key{}
	for _, k := range location.Keys {
		if _, ok := byGroup[k.For]; !ok {
			groups = append(groups, k.For)
		}
		byGroup[k.For] = append(byGroup[k.For], k)
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i] != "all" && groups[j] == "all" })
	for _, g := range groups {
		title := titles[g]
		if title == "" {
			title = g
		}
		fmt.Fprintf(w, "\n%s:\n", title)
		for _, k := range byGroup[g] {
			fmt.Fprintf(w, "  %s", k.Name)
			if len(k.Aliases) > 0 {
				fmt.Fprintf(w, " (also %s)", strings.Join(k.Aliases, ", "))
			}
			if len(k.Env) > 0 {
				fmt.Fprintf(w, " [$%s]", strings.Join(k.Env, ", $"))
			}
			fmt.Fprintln(w)
			doc := k.Doc
			if k.Refused != "" {
				doc = "refused: " + k.Refused
			}
			if doc != "" {
				fmt.Fprintf(w, "      %s\n", doc)
			}
		}
	}
}
