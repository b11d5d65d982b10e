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
	steps := regexp.MustCompile("(?m)^\\d+\\. `([^`]+\\.go)`").FindAllStringSubmatch(section, -1)
	if len(steps) == 0 || len(steps) > 15 {
		t.Fatalf("the reading guide names %d files; want 1 to 15", len(steps))
	}
	seen := map[string]bool{}
	for _, m := range steps {
		if seen[m[1]] {
			t.Errorf("%s is named twice", m[1])
		}
		seen[m[1]] = true
		if _, err := os.Stat(m[1]); err != nil {
			t.Errorf("the reading guide names %s: %v", m[1], err)
		}
	}
}
