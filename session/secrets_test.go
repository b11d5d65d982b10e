package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/internal/redact"
)

// Values of sensitive keys print as Spark prints them: SET, SET key and SET key = value, SHOW
// TBLPROPERTIES and DESCRIBE DETAIL show redact.Mask, and the statement text too.
func TestSensitiveValuesAreRedacted(t *testing.T) {
	dir := t.TempDir()
	commit := `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n" +
		`{"metaData":{"id":"t","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":[],` +
		`"configuration":{"fs.azure.sas.c.acct.blob.core.windows.net":"PROPSECRET","delta.logRetentionDuration":"interval 30 days"},"createdTime":0}}` + "\n"
	if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_delta_log", "00000000000000000000.json"), []byte(commit), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newSession(t, Config{})
	rs := execAll(t, s, "SET fs.azure.account.key.acct.dfs.core.windows.net = 'SETSECRET'; SET spark.hadoop.fs.s3a.secret.key = SETSECRET2; "+
		"SET fs.azure.account.key.acct.dfs.core.windows.net; SET; SET spark.databricks.delta.vacuum.logging.enabled = true; "+
		"SHOW TBLPROPERTIES '"+dir+"'; SHOW TBLPROPERTIES '"+dir+"' ('fs.azure.sas.c.acct.blob.core.windows.net'); DESCRIBE DETAIL '"+dir+"'")
	for _, r := range rs {
		all := r.Statement + " " + strings.Join(r.Warnings, " ")
		for k, v := range r.Settings {
			all += " " + k + "=" + v
		}
		for k, v := range r.Properties {
			all += " " + k + "=" + v
		}
		if r.Detail != nil {
			for k, v := range r.Detail.Properties {
				all += " " + k + "=" + v
			}
		}
		if strings.Contains(all, "SECRET") {
			t.Errorf("%s shows a secret: %s", r.Kind, all)
		}
	}
	if got := rs[0].Settings["fs.azure.account.key.acct.dfs.core.windows.net"]; got != redact.Mask {
		t.Errorf("SET key = value shows %q", got)
	}
	if got := rs[3].Settings["spark.hadoop.fs.s3a.secret.key"]; got != redact.Mask {
		t.Errorf("SET shows %q", got)
	}
	if got := rs[4].Settings["spark.databricks.delta.vacuum.logging.enabled"]; got != "true" {
		t.Errorf("a setting that is not sensitive shows %q", got)
	}
	if got := rs[5].Properties["delta.logRetentionDuration"]; got != "interval 30 days" {
		t.Errorf("a property that is not sensitive shows %q", got)
	}
	if got := rs[6].Properties["fs.azure.sas.c.acct.blob.core.windows.net"]; got != redact.Mask {
		t.Errorf("SHOW TBLPROPERTIES (key) shows %q", got)
	}
	// The value is kept: the session has it, only what is shown is masked.
	if v, _ := s.Setting("fs.azure.account.key.acct.dfs.core.windows.net"); v != "SETSECRET" {
		t.Errorf("the session lost the value: %q", v)
	}
}
