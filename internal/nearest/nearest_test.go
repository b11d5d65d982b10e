package nearest

import "testing"

func TestName(t *testing.T) {
	names := []string{"aws_region", "aws_endpoint", "retain-hours", "dry-run", "json"}
	for _, c := range []struct{ typed, want string }{
		{"aws_regoin", "aws_region"},     // two swapped
		{"aws_rgion", "aws_region"},      // one left out
		{"retian-hours", "retain-hours"}, // a swap
		{"jsn", "json"},                  // short: one slip
		{"jn", ""},                       // two slips of a short name
		{"dry-runs", "dry-run"},
		{"region", ""},       // too far from aws_region
		{"", ""},             // nothing typed: within 1 of nothing of length 1 only
		{"zzzzzzzzzzzz", ""}, // far from all
	} {
		if got := Name(c.typed, names); got != c.want {
			t.Errorf("Name(%q) = %q, want %q", c.typed, got, c.want)
		}
	}
	if got := Name("ab", []string{"ac", "aa"}); got != "aa" {
		t.Errorf("a tie: %q, want the first in byte order (aa)", got)
	}
	if got := Name("x", nil); got != "" {
		t.Errorf("no names: %q", got)
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"ab", "ba", 2}, {"same", "same", 0}, {"dryrun", "dry-run", 1}, {"ação", "acao", 2}} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
