package run

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage/mem"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// A run recorded in the history of a table on S3 warns of the S3 multi-writer caveat; one on
// another store, or not recorded, does not.
func TestS3LoggingWarns(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		location string
		logging  *bool
		warn     bool
	}{
		{"s3://bucket/t", &yes, true},
		{"s3a://bucket/t", &yes, true},
		{"s3://bucket/t", nil, false}, // the default on S3: not recorded
		{"s3://bucket/t", &no, false},
		{"gs://bucket/t", &yes, false},
		{"abfss://c@acct.dfs.core.windows.net/t", nil, false},
	} {
		store := mem.New(c.location)
		writeEmptyTable(t, store)
		res, err := Vacuum(context.Background(), store, Request{Logging: c.logging, Options: vacuum.Options{Now: time.Now()}})
		if err != nil {
			t.Fatalf("%s: %v", c.location, err)
		}
		if got := slices.Contains(res.Warnings, S3LoggingWarning); got != c.warn {
			t.Errorf("%s, logging %v: warned %v, want %v (%q)", c.location, c.logging, got, c.warn, res.Warnings)
		}
	}
}
