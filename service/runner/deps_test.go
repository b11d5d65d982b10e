package runner_test

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/deltavacuum/deltavacuum"

// goList runs go list with args and returns its output's fields.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if errors.Is(err, exec.ErrNotFound) {
		t.Skip("no go command: nothing to check with")
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list %v: %v\n%s", args, err, ee.Stderr)
		}
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Fields(string(out))
}

// httpSide are the packages of the HTTP side of the service: the HTTP layer with the page's
// words (package service, messages.go), the page's templates, the metrics' handler and the
// test servers.
var httpSide = []string{module + "/service", "html/template", "github.com/prometheus/client_golang/prometheus/promhttp", "net/http/httptest"}

// TestRunnerKnowsNoHTTP (issue 33): the runner (service/runner), the tables (service/tables) and
// the state database (service/state) link none of the HTTP side of the service; the runner and
// the state database import no net/http (the tables do, for the stores' transport wrapper only;
// the stores' clients under all three use it). The check can fail: package service links all
// of httpSide.
func TestRunnerKnowsNoHTTP(t *testing.T) {
	for _, pkg := range []string{"service/runner", "service/tables", "service/state"} {
		deps := goList(t, "-deps", module+"/"+pkg)
		for _, p := range httpSide {
			if slices.Contains(deps, p) {
				t.Errorf("%s links %s", pkg, p)
			}
		}
	}
	for _, pkg := range []string{"service/runner", "service/state"} {
		if imports := goList(t, "-f", `{{join .Imports " "}}`, module+"/"+pkg); slices.Contains(imports, "net/http") {
			t.Errorf("%s imports net/http", pkg)
		}
	}
	deps := goList(t, "-deps", module+"/service")
	for _, p := range httpSide {
		if p != module+"/service" && p != "net/http/httptest" && !slices.Contains(deps, p) {
			t.Errorf("package service does not link %s: the check above proves nothing", p)
		}
	}
	if imports := goList(t, "-f", `{{join .Imports " "}}`, module+"/service"); !slices.Contains(imports, "net/http") {
		t.Error("package service imports no net/http: the check above proves nothing")
	}
}
