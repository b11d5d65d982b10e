// Command testsummary reads `go test -json` and prints what go test prints without -v (each
// package's ok or FAIL line, a failed test's output, build errors), so that the output of
// scripts/test.sh stays readable; with -summarize it ends a run with the count of the tests
// that passed, failed and were skipped, and the skips grouped by their reason: a test that
// skips for want of a server, a browser or the fixtures is counted and named, never silent.
//
//	go test -json ./... | testsummary -log results.jsonl
//	testsummary -summarize results.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
}

func main() {
	logPath := flag.String("log", "", "also append every event to this file (for -summarize)")
	summarize := flag.Bool("summarize", false, "summarize the events of the files named as arguments")
	flag.Parse()
	if *summarize {
		s := newSummary()
		for _, name := range flag.Args() {
			f, err := os.Open(name)
			if err != nil {
				fmt.Fprintln(os.Stderr, "testsummary:", err)
				os.Exit(1)
			}
			s.read(f, io.Discard)
			f.Close()
		}
		s.print(os.Stdout)
		return
	}
	in := io.Reader(os.Stdin)
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(1)
		}
		defer f.Close()
		in = io.TeeReader(in, f)
	}
	newSummary().read(in, os.Stdout)
}

type key struct{ pkg, test string }

type summary struct {
	out                     map[key][]string // the output of each test still running
	passed, failed, skipped int
	reasons                 map[string][]string // reason -> tests
}

func newSummary() *summary {
	return &summary{out: map[key][]string{}, reasons: map[string][]string{}}
}

// read reads events from r and writes to w what go test prints without -v.
func (s *summary) read(r io.Reader, w io.Writer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintf(w, "%s\n", line) // not an event: go test's own words
			continue
		}
		k := key{e.Package, e.Test}
		switch {
		case e.Action == "build-output":
			fmt.Fprint(w, e.Output)
		case e.Action == "output" && e.Test == "":
			if e.Output != "PASS\n" && !strings.HasPrefix(e.Output, "=== ") {
				fmt.Fprint(w, e.Output)
			}
		case e.Action == "output":
			s.out[k] = append(s.out[k], e.Output)
		case e.Test == "":
			// A package's start, pass, fail or skip: its output line says it.
		case e.Action == "pass":
			s.passed++
			delete(s.out, k)
		case e.Action == "fail":
			s.failed++
			for _, o := range s.out[k] {
				fmt.Fprint(w, o)
			}
			delete(s.out, k)
		case e.Action == "skip":
			s.skipped++
			reason := skipReason(s.out[k])
			s.reasons[reason] = append(s.reasons[reason], e.Test+" ("+e.Package+")")
			delete(s.out, k)
		}
	}
}

// location is the file:line a t.Skip message starts with.
var location = regexp.MustCompile(`^[\w.-]+\.go:\d+: `)

// skipReason is what a skipped test said, its file:line and go test's own lines left out.
func skipReason(out []string) string {
	var parts []string
	for _, o := range out {
		l := strings.TrimSpace(o)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		parts = append(parts, location.ReplaceAllString(l, ""))
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}

func (s *summary) print(w io.Writer) {
	if s.skipped > 0 {
		type group struct {
			reason string
			tests  []string
		}
		var groups []group
		for r, t := range s.reasons {
			groups = append(groups, group{r, t})
		}
		sort.Slice(groups, func(i, j int) bool {
			if len(groups[i].tests) != len(groups[j].tests) {
				return len(groups[i].tests) > len(groups[j].tests)
			}
			return groups[i].reason < groups[j].reason
		})
		fmt.Fprintf(w, "\nSkipped: %d tests, by reason:\n", s.skipped)
		for _, g := range groups {
			fmt.Fprintf(w, "%5d  %s\n", len(g.tests), g.reason)
			names := g.tests
			more := ""
			if len(names) > 5 {
				names, more = names[:5], fmt.Sprintf(" and %d more", len(g.tests)-5)
			}
			fmt.Fprintf(w, "       %s%s\n", strings.Join(names, ", "), more)
		}
	}
	fmt.Fprintf(w, "\n%d passed, %d failed, %d skipped\n", s.passed, s.failed, s.skipped)
}
