package vacuum_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// TestCheckTrashPlaceOnDisk: on local disk, where folders exist, a trash folder whose way
// holds folders only is accepted; one whose way holds a file is refused.
func TestCheckTrashPlaceOnDisk(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "_u", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_t"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	for trash, ok := range map[string]bool{"_u/": true, "_u/x/": true, "_u/x/run/": true, "_v/run/": true, "_t/": false, "_t/run/": false} {
		if err := vacuum.CheckTrashPlace(context.Background(), store, trash); (err == nil) != ok {
			t.Errorf("CheckTrashPlace(%q) = %v; want accepted %v", trash, err, ok)
		}
	}
}
