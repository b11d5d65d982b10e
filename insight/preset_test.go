package insight

import "testing"

// The what-if rows name the table types whose preset holds their retention.
func TestPresetOf(t *testing.T) {
	for h, want := range map[float64]string{
		24:    "streaming sink",
		48:    "streaming sink, high-churn (MERGE-heavy) fact",
		72:    "high-churn (MERGE-heavy) fact",
		168:   "dimensional",
		720:   "dimensional",
		61320: "regulated",
		0:     "",
		100:   "",
		2554:  "",
	} {
		if got := presetOf(h); got != want {
			t.Errorf("presetOf(%v) = %q, want %q", h, got, want)
		}
	}
}
