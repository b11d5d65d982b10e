package cli

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/deltavacuum/deltavacuum/insight"
)

// helpOf is the --help of the command at path (empty for the root), and its flags' lines.
func helpOf(t *testing.T, path []string) string {
	t.Helper()
	code, out, errs := run(t, append(append([]string{}, path...), "--help")...)
	if code != ExitOK {
		t.Fatalf("%v --help: exit %d: %s", path, code, errs)
	}
	return out
}

// commandPaths are the paths of every command below the root, the root's own first.
func commandPaths() [][]string {
	var out [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		out = append(out, path)
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" {
				continue
			}
			walk(sub, append(slices.Clone(path), sub.Name()))
		}
	}
	var b bytes.Buffer
	walk(newRoot(strings.NewReader(""), &b, &b), nil)
	return out
}

// TestHelpTellsOnlyWhatTheUserHas: no flag states its default twice (its usage and pflag's
// "(default …)"), and no help text points to a file of the repository, which a user of the
// binary does not have.
func TestHelpTellsOnlyWhatTheUserHas(t *testing.T) {
	paths := commandPaths()
	if len(paths) < 15 {
		t.Fatalf("only %d commands found: %v", len(paths), paths)
	}
	for _, p := range paths {
		out := helpOf(t, p)
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "-") && strings.Count(line, "(default") > 1 {
				t.Errorf("%v --help: a flag states its default twice:\n%s", p, line)
			}
		}
		if p := strings.Join(p, " "); p == "inspect" && (!strings.Contains(out, "(default "+joinHours(insight.DefaultWhatIfHours)+")\n") || !strings.Contains(out, `(default "USD")`+"\n")) {
			t.Errorf("inspect --help: the defaults of --what-if-hours and --currency, as a user writes them:\n%s", out)
		}
		for _, repoFile := range []string{"docs/", ".md", "README", "example_test", "_test.go", "scripts/", "python/", "make dist"} {
			if strings.Contains(out, repoFile) {
				t.Errorf("%v --help names %q, a file of the repository:\n%s", p, repoFile, out)
			}
		}
	}
}

// TestConfListsWhatTheCommandReads: the session settings are read by a VACUUM only, so vacuum
// and sql list them and the other commands do not (they still take --conf, hidden, for a
// program that gives one session's settings to every command).
func TestConfListsWhatTheCommandReads(t *testing.T) {
	for _, p := range commandPaths() {
		out := helpOf(t, p)
		lists := confFlag.MatchString(out) || strings.Contains(out, "spark.databricks.delta.vacuum.lite.enabled")
		want := len(p) == 1 && (p[0] == "vacuum" || p[0] == "sql")
		if lists != want {
			t.Errorf("%v --help lists --conf and its keys: %v, want %v", p, lists, want)
		}
	}
	for _, args := range [][]string{{"runs"}, {"undo", "--dry-run"}} {
		dir := t.TempDir()
		args = append(args, dir, "--conf", checkOff)
		code, _, errs := run(t, args...)
		if strings.Contains(errs, "unknown flag") || code == ExitUsage {
			t.Errorf("%v: --conf is refused (exit %d): %s", args, code, errs)
		}
	}
	code, _, errs := run(t, "runs", t.TempDir(), "--conf", "no.such.key=true")
	if code != ExitUsage || !strings.Contains(errs, "unknown setting") {
		t.Errorf("runs --conf no.such.key: exit %d, %s; want a usage error", code, errs)
	}
}

var confFlag = regexp.MustCompile(`--conf\b`)

func TestUnknownFlagSuggestsTheNearest(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // "" for no suggestion
	}{
		{[]string{"vacuum", "/t", "--retian-hours", "1"}, "did you mean --retain-hours?"},
		{[]string{"vacuum", "/t", "--dryrun"}, "did you mean --dry-run?"},
		{[]string{"vacuum", "/t", "--storage-options", "a=b"}, "did you mean --storage-option?"},
		{[]string{"inspect", "/t", "--what-if-hour=1"}, "did you mean --what-if-hours?"},
		{[]string{"runs", "/t", "--log-levle", "debug"}, "did you mean --log-level?"}, // inherited from the root
		{[]string{"vacuum", "/t", "--retain"}, "did you mean --retain-hours?"},        // a prefix
		{[]string{"vacuum", "/t", "--banana"}, ""},
		{[]string{"runs", "/t", "--cnf", "a=b"}, ""}, // --conf is hidden there: never suggested
	} {
		code, _, errs := run(t, tc.args...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", tc.args, code, ExitUsage)
		}
		if tc.want == "" {
			if strings.Contains(errs, "did you mean") {
				t.Errorf("%v: %s; want no suggestion", tc.args, errs)
			}
			continue
		}
		if !strings.Contains(errs, "unknown flag") || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: %s; want %q", tc.args, errs, tc.want)
		}
	}
}

// TestFlagValuesComplete: the shell completion (cobra's hidden __complete command, which the
// scripts of deltavacuum completion call) offers the values each flag takes.
func TestFlagValuesComplete(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
		not  []string
	}{
		{[]string{"vacuum", "/t", "--progress", ""}, progressModes, nil},
		{[]string{"vacuum", "/t", "--inventory-format", ""}, inventoryFormats, nil},
		{[]string{"inspect", "/t", "--inventory-format", ""}, inventoryFormats, nil},
		{[]string{"vacuum", "/t", "--log-level", ""}, logLevels, nil},
		{[]string{"runs", "/t", "--log-level", ""}, logLevels, nil},
		{[]string{"vacuum", "/t", "--conf", ""}, []string{"spark.databricks.delta.retentionDurationCheck.enabled=", "spark.databricks.delta.vacuum.lite.enabled="}, nil},
		{[]string{"sql", "--conf", ""}, []string{"spark.databricks.delta.vacuum.logging.enabled="}, nil},
		{[]string{"runs", "/t", "--conf", ""}, nil, []string{"spark.databricks.delta.vacuum.lite.enabled="}},
		{[]string{"vacuum", "/t", "--storage-option", ""}, []string{"aws_region=", "azure_storage_account_key=", "google_service_account="}, nil},
	} {
		code, out, errs := run(t, append([]string{"__complete"}, tc.args...)...)
		if code != ExitOK {
			t.Errorf("__complete %v: exit %d: %s", tc.args, code, errs)
			continue
		}
		got := strings.Split(strings.TrimSpace(out), "\n")
		got = got[:len(got)-1] // the last line is the directive (":4")
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("__complete %v: %q not offered; got %q", tc.args, w, got)
			}
		}
		for _, w := range tc.not {
			if slices.Contains(got, w) {
				t.Errorf("__complete %v: %q offered; got %q", tc.args, w, got)
			}
		}
	}
}
