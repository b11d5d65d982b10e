package deltalog

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func protocolWith(features ...string) Protocol {
	return Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{}, WriterFeatures: features}
}

// TestFeatures: every feature of the list is accepted or refused as it says, as a writer
// feature and (for reader-writer features) as a reader feature too; anything else is refused.
func TestFeatures(t *testing.T) {
	for _, f := range Features {
		p := protocolWith(f.Name)
		if f.Reader {
			p.ReaderFeatures = []string{f.Name}
		}
		err := (&Snapshot{Location: "file:///t", Protocol: p}).CheckVacuum()
		if f.Supported && err != nil {
			t.Errorf("%s: refused: %v", f.Name, err)
		}
		if !f.Supported && err == nil {
			t.Errorf("%s: accepted, want a refusal", f.Name)
		}
		if !f.Supported && err != nil && !strings.Contains(err.Error(), f.Name) {
			t.Errorf("%s: the refusal %q does not name the feature", f.Name, err)
		}
		if f.Why == "" {
			t.Errorf("%s: no reason given", f.Name)
		}
	}
	for _, name := range []string{"someFutureFeature", "CatalogManaged", "deletionvectors", "testWriter"} {
		if err := (&Snapshot{Location: "file:///t", Protocol: protocolWith(name)}).CheckVacuum(); !errors.Is(err, ErrUnsupportedFeatures) {
			t.Errorf("%s: got %v, want ErrUnsupportedFeatures (names are exact)", name, err)
		}
	}
	// A writer-only feature named as a reader feature is not one this program knows.
	p := protocolWith("appendOnly")
	p.ReaderFeatures = []string{"appendOnly"}
	if err := (&Snapshot{Location: "file:///t", Protocol: p}).CheckVacuum(); err == nil {
		t.Error("appendOnly as a reader feature: accepted")
	}
	for _, name := range []string{"catalogManaged", "catalogOwned-preview", "coordinatedCommits-preview"} {
		if err := (&Snapshot{Location: "file:///t", Protocol: protocolWith(name)}).CheckVacuum(); !errors.Is(err, ErrCatalogManaged) {
			t.Errorf("%s: got %v, want ErrCatalogManaged", name, err)
		}
	}
}

// TestFeaturesDocumented: docs/design.md gives every feature's decision.
func TestFeaturesDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range Features {
		if !strings.Contains(string(b), "`"+f.Name+"`") {
			t.Errorf("docs/design.md does not list the feature %s", f.Name)
		}
	}
}
