package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/deltavacuum/deltavacuum/internal/fixtures"
)

// TestVacuumShardFlags: --shard and --version are documented, hostile values are usage errors
// (exit 2) that say what to write, --shard without --version is refused, and the text and JSON
// outputs say the shard.
func TestVacuumShardFlags(t *testing.T) {
	_, help, _ := run(t, "vacuum", "--help")
	for _, want := range []string{"--shard I/N", "--version V", "JOB_COMPLETION_INDEX", "_last_vacuum_info"} {
		if !strings.Contains(help, want) {
			t.Errorf("vacuum --help does not say %q", want)
		}
	}
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--shard", "3/2", "--version", "13"}, ExitUsage, "from 0 to 1"},
		{[]string{"--shard", "0/0", "--version", "13"}, ExitUsage, "at least 1"},
		{[]string{"--shard", "-1/4", "--version", "13"}, ExitUsage, "INDEX/COUNT"},
		{[]string{"--shard", "a/b", "--version", "13"}, ExitUsage, "INDEX/COUNT"},
		{[]string{"--shard", "1/4/5", "--version", "13"}, ExitUsage, "INDEX/COUNT"},
		{[]string{"--shard", "/8", "--version", "13"}, ExitUsage, "JOB_COMPLETION_INDEX"}, // "${JOB_COMPLETION_INDEX}/8" unset
		{[]string{"--shard", "0/1000001", "--version", "13"}, ExitUsage, "at most 100000"},
		{[]string{"--shard", "1/4"}, ExitUsage, "--version V"},
		{[]string{"--version", "-1"}, ExitUsage, "0 or more"},
		{[]string{"--version", "x"}, ExitUsage, "invalid argument"},
		{[]string{"--version", "14"}, ExitFailure, "version 14 does not exist: the latest version is 13"},
	} {
		code, _, errs := run(t, append([]string{"vacuum", dir, "--dry-run"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errs, tc.says) {
			t.Errorf("%q: exit %d %q; want exit %d saying %q", tc.args, code, errs, tc.code, tc.says)
		}
	}
	args := []string{"vacuum", dir, "--dry-run", "--retain-hours", "0", "--conf", checkOff, "--shard", "0/1", "--version", "12"}
	code, out, errs := run(t, args...)
	if code != ExitOK || !strings.Contains(out, "This was shard 0/1 of "+"file://") || !strings.Contains(out, "at version 12") {
		t.Errorf("exit %d, text output %q %s", code, out, errs)
	}
	code, out, errs = run(t, append(args, "--json")...)
	var doc struct {
		Version int64
		Shard   *struct{ Index, Count int }
	}
	if err := json.Unmarshal([]byte(out), &doc); code != ExitOK || err != nil || doc.Shard == nil || doc.Shard.Count != 1 || doc.Version != 12 {
		t.Errorf("exit %d, JSON %s (%v) %s", code, out, err, errs)
	}
}

// TestKubernetesJobManifest: docs/k8s-vacuum-job.yaml is an Indexed Job whose completions,
// parallelism and --shard count agree, whose pods pass the completion index and one version,
// and whose --shard, once Kubernetes expands it, is what this command accepts.
func TestKubernetesJobManifest(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "k8s-vacuum-job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var job struct {
		Kind string
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int
			Parallelism    int
			Template       struct {
				Spec struct {
					Containers []struct {
						Args []string
						Env  []struct {
							Name      string
							ValueFrom struct {
								FieldRef struct {
									FieldPath string `yaml:"fieldPath"`
								} `yaml:"fieldRef"`
							} `yaml:"valueFrom"`
						}
						EnvFrom []struct {
							SecretRef struct{ Name string } `yaml:"secretRef"`
						} `yaml:"envFrom"`
					}
				}
			}
		}
	}
	if err := yaml.Unmarshal(b, &job); err != nil {
		t.Fatal(err)
	}
	s := job.Spec
	if job.Kind != "Job" || s.CompletionMode != "Indexed" || s.Completions < 2 || s.Parallelism != s.Completions || len(s.Template.Spec.Containers) != 1 {
		t.Fatalf("not an Indexed Job of all shards at once: %+v", job)
	}
	c := s.Template.Spec.Containers[0]
	if len(c.EnvFrom) == 0 || c.EnvFrom[0].SecretRef.Name == "" {
		t.Error("the credentials do not come from a Secret")
	}
	index := ""
	for _, e := range c.Env {
		if e.ValueFrom.FieldRef.FieldPath == "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
			index = e.Name
		}
	}
	args := strings.Join(c.Args, " ")
	if index == "" || !strings.Contains(args, fmt.Sprintf("--shard $(%s)/%d", index, s.Completions)) || !strings.Contains(args, "--version __VERSION__") {
		t.Fatalf("the pods' arguments %q do not pass the completion index (%q) and the count %d", args, index, s.Completions)
	}
	// As Kubernetes and the sed of the manifest's header expand them, for the last pod.
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	expanded := strings.NewReplacer("$("+index+")", fmt.Sprint(s.Completions-1), "__VERSION__", "13").Replace(args)
	fields := strings.Fields(expanded)
	fields[1] = dir // the table
	code, out, errs := run(t, append(fields, "--dry-run", "--progress", "none")...)
	if code != ExitOK || !strings.Contains(out, fmt.Sprintf(`"count": %d`, s.Completions)) {
		t.Errorf("the manifest's command: exit %d %s %s", code, out, errs)
	}
}

// TestRunsShowShard: deltavacuum runs says which shard each sharded run vacuumed.
func TestRunsShowShard(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	for i := range 2 {
		if code, _, errs := run(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff, "--shard", fmt.Sprintf("%d/2", i), "--version", "13"); code != ExitOK {
			t.Fatalf("shard %d/2: exit %d %s", i, code, errs)
		}
	}
	code, out, errs := run(t, "runs", dir)
	if code != ExitOK || !strings.Contains(out, "FULL 0/2") || !strings.Contains(out, "FULL 1/2") {
		t.Errorf("exit %d: %s %s", code, out, errs)
	}
}
