package deltavacuum_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// Example plans a VACUUM (the DRY RUN is the plan), looks at it, then runs it for real: the run
// takes the table's lock, records itself (deltavacuum runs, undo), commits VACUUM START and END
// and deletes what a fresh plan lists.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	makeExampleTable(ctx, dir)

	t, err := deltavacuum.Open(ctx, dir)
	if err != nil {
		log.Fatal(err)
	}
	plan, err := t.Plan(ctx, vacuum.Options{}) // the table's retention: 7 days
	if err != nil {
		log.Fatal(err)
	}
	defer plan.Close() // the plan's temporary file, when it has more files than stay in memory
	err = plan.Files.Each(func(f vacuum.File) error {
		fmt.Println("would delete", f.Path, "reason:", f.Reason)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := t.Vacuum(ctx, deltavacuum.VacuumOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("deleted", res.NumDeletedFiles, "files; run", res.RunID != "", "recorded at version", *res.StartVersion)
	// Output:
	// would delete old.parquet reason: tombstone
	// would delete stray.parquet reason: untracked
	// deleted 2 files; run true recorded at version 1
}

// makeExampleTable writes a table: live.parquet is live, old.parquet was removed 10 days
// ago, stray.parquet was never committed, and all three are 10 days old.
func makeExampleTable(ctx context.Context, dir string) {
	store, _ := local.New(dir)
	old := time.Now().Add(-10 * 24 * time.Hour)
	actions := []any{
		map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
		map[string]any{"metaData": map[string]any{"id": "example", "format": map[string]any{"provider": "parquet"},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{}}},
		map[string]any{"add": map[string]any{"path": "live.parquet", "size": 4, "modificationTime": old.UnixMilli(), "dataChange": true}},
		map[string]any{"remove": map[string]any{"path": "old.parquet", "deletionTimestamp": old.UnixMilli(), "dataChange": true}},
	}
	if err := deltalog.WriteCommit(ctx, store, 0, actions); err != nil {
		log.Fatal(err)
	}
	for _, name := range []string{"live.parquet", "old.parquet", "stray.parquet"} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("PAR1"), 0o644)
		os.Chtimes(p, old, old)
	}
}
