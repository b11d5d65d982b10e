package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/fixtures"
)

// TestREADMECommandsRun (issue 36, item 7): every command README.md shows runs, in the order
// it shows them, on a copy of a real table standing for /data/sales: each bin/deltavacuum line
// through the command line (in this process), exit status 0; each make target through what
// the Makefile runs for it (make -n), the demo and the service for real; the service's
// maintenance.yaml as the README writes it; the Go snippet is the runnable Example of
// example_test.go, line for line; the Python snippet runs in python/tests/test_readme.py
// (make test-python). Only a command on a cloud store is left out, with that reason: it needs
// credentials. A command this test does not know how to run fails it: teach it here.
func TestREADMECommandsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the README's demo and service")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(readme, []byte("\n")); n > 150 {
		t.Errorf("README.md has %d lines: a newcomer reads it in five minutes (at most about 150)", n)
	}
	table := fixtures.Copy(t, fixtureTable, time.Now().Add(-30*24*time.Hour))
	work := t.TempDir()
	subst := func(s string) string {
		s = strings.ReplaceAll(s, "/data/sales", table)
		return strings.ReplaceAll(s, "maintenance.yaml", filepath.Join(work, "maintenance.yaml"))
	}
	blocks := fencedBlocks(string(readme))
	ran := 0
	for _, b := range blocks {
		switch b.lang {
		case "yaml":
			// The service's configuration, on a free port (the README's listens on 8080).
			cfg := subst(b.text) + "listen: 127.0.0.1:0\n"
			if err := os.WriteFile(filepath.Join(work, "maintenance.yaml"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
		case "go":
			example, err := os.ReadFile("../../example_test.go")
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(b.text, "\n") {
				if l := strings.TrimSpace(stripComment(line)); l != "" && !bytes.Contains(example, []byte(l)) {
					t.Errorf("the README's Go line %q is not in example_test.go's runnable Example", l)
				}
			}
		case "python":
			if _, err := os.Stat("../../python/tests/test_readme.py"); err != nil {
				t.Errorf("the README's Python snippet is run by no test: %v", err)
			}
		case "sh":
			for _, line := range commandLines(b.text) {
				args, err := shellWords(stripComment(line))
				if err != nil || len(args) == 0 {
					t.Errorf("README line %q: %v", line, err)
					continue
				}
				ran++
				readmeCommand(t, args, subst, line)
			}
		}
	}
	if ran < 10 {
		t.Errorf("ran %d README commands: the README's shell blocks were not found", ran)
	}
}

// readmeCommand runs one command line of the README.
func readmeCommand(t *testing.T, args []string, subst func(string) string, line string) {
	t.Helper()
	switch args[0] {
	case "make":
		if len(args) != 2 {
			t.Errorf("README line %q: one make target per line", line)
			return
		}
		readmeMake(t, args[1])
	case "bin/deltavacuum":
		for i := range args {
			if cloudURI.MatchString(args[i]) {
				t.Logf("not run, it needs cloud credentials: %s", line)
				return
			}
			args[i] = subst(args[i])
		}
		if len(args) >= 4 && args[1] == "serve" && !containsArg(args, "--check") {
			readmeServe(t, args[1:])
			return
		}
		if code, out, errs := run(t, args[1:]...); code != ExitOK {
			t.Errorf("README: %s\nexit %d\n%s%s", line, code, out, errs)
		}
	default:
		t.Errorf("README line %q: this test does not know how to run %s: teach it", line, args[0])
	}
}

var cloudURI = regexp.MustCompile(`^(s3a?|abfss?|gs|az|wasbs?)://`)

// readmeMake checks what make runs for target (make -n) and runs it where it can in a test:
// the demo and the demo service in this process; make test runs this very test, so its script
// is only parsed (bash -n); make build is the build this test binary was built by.
func readmeMake(t *testing.T, target string) {
	t.Helper()
	dry := func(want string) {
		t.Helper()
		out, err := exec.Command("make", "-s", "-n", "-C", "../..", target).CombinedOutput()
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("make -n %s: %v, want %q in:\n%s", target, err, want, out)
		}
	}
	switch target {
	case "demo":
		dry("go run ./cmd/deltavacuum demo")
		if code, out, errs := run(t, "demo"); code != ExitOK || !strings.Contains(out, "--dry-run") {
			t.Errorf("make demo (deltavacuum demo): exit %d\n%s%s", code, out, errs)
		}
	case "demo-serve":
		dry("go run ./cmd/deltavacuum demo --serve")
		readmeServe(t, []string{"demo", "--serve", "--listen", "127.0.0.1:0"})
	case "test":
		dry("scripts/test.sh")
		if out, err := exec.Command("bash", "-n", "../../scripts/test.sh").CombinedOutput(); err != nil {
			t.Errorf("scripts/test.sh does not parse: %v\n%s", err, out)
		}
	case "build":
		dry("-o bin/deltavacuum ./cmd/deltavacuum")
	default:
		t.Errorf("README: make %s: this test does not know how to run it: teach it", target)
	}
}

// readmeServe runs a serving command until it answers /healthz on the address it prints or
// logs, then stops it as Ctrl-C does: it must end with status 0.
func readmeServe(t *testing.T, args []string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errs syncBuffer
	done := make(chan int, 1)
	go func() { done <- Run(ctx, args, strings.NewReader(""), &out, &errs) }()
	addr := regexp.MustCompile(`(?:Open http://|"address":")(127\.0\.0\.1:\d+)`)
	var base string
	for deadline := time.Now().Add(2 * time.Minute); base == ""; {
		select {
		case code := <-done:
			t.Fatalf("%v exited %d before serving:\n%s%s", args, code, out.String(), errs.String())
		case <-time.After(20 * time.Millisecond):
		}
		if m := addr.FindStringSubmatch(out.String() + errs.String()); m != nil {
			base = "http://" + m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v printed no address:\n%s%s", args, out.String(), errs.String())
		}
	}
	resp, err := http.Get(base + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("%v: GET /healthz: %v %v", args, resp, err)
	}
	if resp != nil {
		resp.Body.Close()
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("%v exited %d after Ctrl-C:\n%s", args, code, errs.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("%v did not stop", args)
	}
}

type fenced struct{ lang, text string }

// fencedBlocks are the fenced code blocks of a Markdown text, with their language.
func fencedBlocks(md string) []fenced {
	var out []fenced
	var cur *fenced
	for _, line := range strings.Split(md, "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &fenced{lang: strings.TrimSpace(strings.TrimPrefix(line, "```"))}
		case cur != nil && strings.HasPrefix(line, "```"):
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		}
	}
	return out
}

// commandLines are the commands of a shell block: its lines, a line ending in '\' joined to
// the next, blank ones left out.
func commandLines(block string) []string {
	var out []string
	cur := ""
	for _, line := range strings.Split(block, "\n") {
		if l, ok := strings.CutSuffix(line, "\\"); ok {
			cur += l + " "
			continue
		}
		cur += line
		if strings.TrimSpace(cur) != "" {
			out = append(out, cur)
		}
		cur = ""
	}
	return out
}

// stripComment drops a '#' comment that starts a word outside quotes.
func stripComment(line string) string {
	var quote rune
	prev := ' '
	for i, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
		case r == '"' || r == '\'':
			quote = r
		case r == '#' && (prev == ' ' || prev == '\t'):
			return line[:i]
		}
		prev = r
	}
	return line
}

// shellWords splits a command line into words as a POSIX shell does for the README's lines:
// blanks separate, single and double quotes group (no expansion is used).
func shellWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == '$' || r == '`' || r == '|' || r == ';' || r == '&' || r == '>' || r == '<':
			return nil, fmt.Errorf("%q needs a shell: keep the README's commands plain", r)
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote")
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

func containsArg(args []string, a string) bool {
	for _, x := range args {
		if x == a {
			return true
		}
	}
	return false
}
