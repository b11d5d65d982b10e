package tempfile

import (
	"os"
	"runtime"
	"testing"
)

// A temporary file leaves no name in its folder: at once on Unix, at Close on Windows; it
// can be written and read until closed, and closed twice.
func TestCreateLeavesNoName(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(dir, "x-*.spill")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("abc"), 0); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 3)
	if _, err := f.ReadAt(b, 0); err != nil || string(b) != "abc" {
		t.Fatalf("read %q, %v", b, err)
	}
	names := func() int {
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	if runtime.GOOS != "windows" && (names() != 0 || f.Path() != "") {
		t.Errorf("the file still has a name (%q) while open", f.Path())
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if n := names(); n != 0 {
		t.Errorf("%d names left in the folder after Close", n)
	}
}

// A folder that cannot be written is the system's error.
func TestCreateInAMissingFolder(t *testing.T) {
	if _, err := Create(t.TempDir()+"/missing", "x-*"); err == nil {
		t.Fatal("created a file in a folder that does not exist")
	}
}
