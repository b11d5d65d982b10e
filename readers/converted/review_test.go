package converted

import (
	"context"
	"fmt"
	"testing"
)

// TestDetectBehindManyStrayFiles: OneLake's conversion log is found however many other files
// the log holds (Hadoop checksum companions, temporary files of crashed writers) before it in
// the listing: the snapshot's list of them is bounded, and a translated log missed lets a
// Delta VACUUM delete what the source table reads.
func TestDetectBehindManyStrayFiles(t *testing.T) {
	files := map[string]string{OneLakeConversionLog: "Status: Succeeded"}
	for i := range 1200 {
		files[fmt.Sprintf("_delta_log/.%020d.json.%d.tmp", i, i)] = ""
	}
	s, snap := table(t, nil, files)
	c, err := Detect(context.Background(), s, snap)
	if err != nil {
		t.Fatal(err)
	}
	if c == nil || c.Engine != "OneLake" {
		t.Fatalf("a OneLake log behind %d stray files: got %+v, want OneLake's conversion", len(files)-1, c)
	}
}
