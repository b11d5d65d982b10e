package local_test

import (
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
)

// The other tests of the package run with openat2 where the kernel has it; these run the
// same contract with the fallback for kernels that lack it (one openat per component).
func TestComponentWalk(t *testing.T) {
	t.Logf("openat2 available here: %v", local.UsesOpenat2())
	local.ForceComponentWalk(t)
	t.Run("Conformance", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Store { return storagetest.NewLocal(t) })
	})
	t.Run("Links", func(t *testing.T) { storagetest.RunLinks(t, storagetest.NewLocalDir) })
	t.Run("SymlinkedRoot", TestSymlinkedRoot)
	t.Run("RootResolvedOnce", TestRootResolvedOnce)
	t.Run("MissingRoot", TestMissingRoot)
	t.Run("SymlinkedLog", TestSymlinkedLog)
	t.Run("DeleteKinds", TestDeleteKinds)
}

// TestLinksWithOpenat2 runs the link contract through the local store's default resolver
// (openat2 on this kernel, when it has it).
func TestLinksWithOpenat2(t *testing.T) {
	if !local.UsesOpenat2() {
		t.Skip("this kernel has no openat2: the stores walk components (TestComponentWalk)")
	}
	storagetest.RunLinks(t, storagetest.NewLocalDir)
}
