package deltavacuum_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadingGuide: docs/architecture.md's reading guide of a FULL run names at most 15
// files, each of which exists, so that the guide breaks when a file it names moves.
func TestReadingGuide(t *testing.T) {
	b, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "## Reading a FULL run on a local table")
	if start < 0 {
		t.Fatal("docs/architecture.md has no section \"Reading a FULL run on a local table\"")
	}
	section := doc[start:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	steps := regexp.MustCompile(`(?m)^\d+\. \*\*`).FindAllString(section, -1)
	if len(steps) == 0 || len(steps) > 15 {
		t.Fatalf("the reading guide has %d steps; want 1 to 15", len(steps))
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z0-9_/]+\\.go)`").FindAllStringSubmatch(section, -1) {
		if named[m[1]] {
			t.Errorf("%s is named twice", m[1])
		}
		named[m[1]] = true
		if _, err := os.Stat(m[1]); err != nil {
			t.Errorf("the reading guide names %s: %v", m[1], err)
		}
	}
	// Every file a FULL run executes with real logic, as make reading-guide measured it.
	list, err := os.ReadFile("docs/reading-guide.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(list)) {
		if !named[f] {
			t.Errorf("a FULL run executes %s (docs/reading-guide.txt), which the reading guide does not name", f)
		}
	}
}
