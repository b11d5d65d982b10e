package service

import (
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/insight"
)

// TestCharts: the charts draw a line per series through every point, scaled to the largest
// value, and escape their labels.
func TestCharts(t *testing.T) {
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	pts := []InspectionPoint{{At: at, LiveBytes: 100, ReclaimableBytes: 0}, {At: at.Add(time.Hour), LiveBytes: 200, ReclaimableBytes: 50}}
	svg := string(english.bytesChart(pts))
	if strings.Count(svg, "<polyline") != 2 || strings.Count(svg, "<circle") != 4 {
		t.Errorf("two series of two points: %s", svg)
	}
	// 100 of 200 is half way up; the largest value at the top; the first time at the left.
	if !strings.Contains(svg, `points="70.0,108.0 624.0,16.0"`) {
		t.Errorf("the live series is not scaled to the plot: %s", svg)
	}
	if english.bytesChart(nil) != "" || english.forecastChart(nil) != "" || english.shareBar(0, 0) != "" {
		t.Error("a chart of nothing is drawn")
	}
	rep := &insight.Report{Now: at, Reclaimable: insight.Reclaimable{Count: insight.Count{Bytes: 5}},
		Forecast: []insight.Day{{Day: 1, Clock: at.Add(24 * time.Hour), Total: insight.Count{Bytes: 10}}}}
	if fc := string(english.forecastChart(rep)); !strings.Contains(fc, `stroke-dasharray`) || strings.Count(fc, "<circle") != 2 {
		t.Errorf("forecast: %s", fc)
	}
	evil := string(english.lineChart(`<script>x</script>`, []series{{Name: `"><script>y</script>`, Points: []chartPoint{{at, 1}}}}))
	if strings.Contains(evil, "<script>") || !strings.Contains(evil, "&lt;script&gt;") {
		t.Errorf("labels not escaped: %s", evil)
	}
	// One inspection: drawn in the middle, labelled with its own time only (not with the ends
	// of a padded axis, which name times nothing was measured at).
	one := string(english.bytesChart(pts[:1]))
	if !strings.Contains(one, `<circle cx="347.0"`) || strings.Count(one, " UTC</text>") != 1 ||
		!strings.Contains(one, `x="347.0" y="216" font-size="11" text-anchor="middle" fill="#8a8f98">2026-05-01 00:00 UTC</text>`) {
		t.Errorf("one inspection is not drawn at its time: %s", one)
	}
	if bar := string(english.shareBar(75, 25)); !strings.Contains(bar, `x="75.00" width="25.00"`) {
		t.Errorf("share bar: %s", bar)
	}
	if fc := string(english.foldersChart([]folderTotal{{Path: "p=<b>", DeleteBytes: 10}, {Path: "", DeleteBytes: 5}, {Path: "q", DeleteBytes: 0}})); strings.Count(fc, "<rect") != 2 || strings.Contains(fc, "<b>") || !strings.Contains(fc, "(table root)") {
		t.Errorf("folders chart: %s", fc)
	}
	// In Portuguese: the axes' sizes and times as Brazilians write them, the labels in words.
	pt := string(portuguese.bytesChart([]InspectionPoint{{At: at, LiveBytes: 1536}, {At: at.Add(48 * time.Hour), LiveBytes: 3 << 20}}))
	for _, want := range []string{"01/05/2026 00:00", "03/05/2026 00:00 UTC", "3,0 MiB", "1,5 KiB", "bytes em uso"} {
		if !strings.Contains(pt, want) {
			t.Errorf("Portuguese chart lacks %q: %s", want, pt)
		}
	}
	if bar := string(portuguese.shareBar(75, 25)); !strings.Contains(bar, "25,0% dos bytes") {
		t.Errorf("Portuguese share bar: %s", bar)
	}
}
