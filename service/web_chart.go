package service

import (
	"fmt"
	"html"
	"html/template"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/insight"
)

// The charts are SVG drawn here, in the page (no script, no image request): numbers and
// escaped labels only.

const (
	chartW, chartH             = 640, 240
	padL, padR, padT, padB     = 70, 16, 16, 40
	colorLive, colorReclaim    = "#2f6db5", "#c2541d"
	colorForecast, colorAxisBg = "#c2541d", "#8a8f98"
)

// series is one line of a chart.
type series struct {
	Name   string
	Color  string
	Dashed bool
	Points []chartPoint
}

type chartPoint struct {
	T time.Time
	V float64
}

// bytesChart draws live and reclaimable bytes at each inspection kept. Empty when nothing
// was inspected.
func (l *locale) bytesChart(pts []InspectionPoint) template.HTML {
	if len(pts) == 0 {
		return ""
	}
	live := series{Name: l.text("chart.live"), Color: colorLive}
	recl := series{Name: l.text("chart.reclaimable"), Color: colorReclaim}
	for _, p := range pts {
		live.Points = append(live.Points, chartPoint{p.At, float64(p.LiveBytes)})
		recl.Points = append(recl.Points, chartPoint{p.At, float64(p.ReclaimableBytes)})
	}
	return l.lineChart(l.text("chart.bytes.title"), []series{live, recl})
}

// forecastChart draws the newest inspection's forecast: what a VACUUM at the same retention
// run each of the next days reclaims if the table receives no new commit.
func (l *locale) forecastChart(last *insight.Report) template.HTML {
	if last == nil || len(last.Forecast) == 0 {
		return ""
	}
	fc := series{Name: l.text("chart.forecast"), Color: colorForecast, Dashed: true}
	fc.Points = append(fc.Points, chartPoint{last.Now, float64(last.Reclaimable.Bytes)})
	for _, d := range last.Forecast {
		fc.Points = append(fc.Points, chartPoint{d.Clock, float64(d.Total.Bytes)})
	}
	return l.lineChart(l.text("chart.forecast.title"), []series{fc})
}

// lineChart draws the series on a time axis, from 0 to the largest value.
func (l *locale) lineChart(title string, all []series) template.HTML {
	var t0, t1 time.Time
	maxV := 0.0
	for _, s := range all {
		for _, p := range s.Points {
			if t0.IsZero() || p.T.Before(t0) {
				t0 = p.T
			}
			if p.T.After(t1) {
				t1 = p.T
			}
			maxV = max(maxV, p.V)
		}
	}
	if maxV <= 0 {
		maxV = 1
	}
	span := t1.Sub(t0)
	single := span <= 0 // one moment (one inspection): drawn in the middle, at its time
	if single {
		span = time.Hour
		t0 = t0.Add(-span / 2)
	}
	x := func(t time.Time) float64 {
		return padL + float64(t.Sub(t0))/float64(span)*float64(chartW-padL-padR)
	}
	y := func(v float64) float64 { return float64(chartH-padB) - v/maxV*float64(chartH-padT-padB) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`, chartW, chartH, html.EscapeString(title))
	fmt.Fprintf(&b, `<title>%s</title>`, html.EscapeString(title))
	// Axes and grid: four steps of the value axis.
	for i := 0; i <= 4; i++ {
		v := maxV * float64(i) / 4
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e3e5e8" stroke-width="1"/>`, padL, chartW-padR, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="11" text-anchor="end" fill="%s">%s</text>`, padL-6, y(v)+4, colorAxisBg, html.EscapeString(l.bytes(int64(v))))
	}
	layout := l.minute
	if span < time.Hour {
		layout = l.stamp
	}
	if single {
		// The time axis is the one moment, labelled under its point: the ends of a padded
		// axis would name times nothing was measured at.
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="11" text-anchor="middle" fill="%s">%s</text>`, x(t1), chartH-padB+16, colorAxisBg, html.EscapeString(t1.UTC().Format(layout)+" UTC"))
	} else {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" fill="%s">%s</text>`, padL, chartH-padB+16, colorAxisBg, html.EscapeString(t0.UTC().Format(layout)))
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" text-anchor="end" fill="%s">%s</text>`, chartW-padR, chartH-padB+16, colorAxisBg, html.EscapeString(t1.UTC().Format(layout)+" UTC"))
	}
	for _, s := range all {
		var pts []string
		for _, p := range s.Points {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(p.T), y(p.V)))
		}
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		fmt.Fprintf(&b, `<polyline class="series" data-series="%s" fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`, html.EscapeString(s.Name), s.Color, dash, strings.Join(pts, " "))
		for _, p := range s.Points {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s: %s</title></circle>`, x(p.T), y(p.V), s.Color,
				html.EscapeString(p.T.UTC().Format(l.minute)), html.EscapeString(l.bytes(int64(p.V))))
		}
	}
	// Legend.
	lx := padL
	for _, s := range all {
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"%s/>`, lx, lx+18, chartH-10, chartH-10, s.Color, dash)
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" fill="#333">%s</text>`, lx+22, chartH-6, html.EscapeString(s.Name))
		lx += 30 + 6*len(s.Name)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// shareBar draws live against reclaimable bytes as one bar.
func (l *locale) shareBar(live, reclaim int64) template.HTML {
	total := live + reclaim
	if total <= 0 {
		return ""
	}
	w := 100 * float64(reclaim) / float64(total)
	return template.HTML(fmt.Sprintf(`<svg class="bar" viewBox="0 0 100 8" preserveAspectRatio="none" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg"><rect width="100" height="8" fill="%s"/><rect x="%.2f" width="%.2f" height="8" fill="%s"/><title>%s</title></svg>`,
		html.EscapeString(l.text("bar.label", "share", l.shareText(w))), colorLive, 100-w, w, colorReclaim,
		html.EscapeString(l.text("bar.title", "live", l.bytes(live), "reclaimable", l.bytes(reclaim)))))
}

// foldersChart draws the bytes a preview deletes in its first folders as horizontal bars.
func (l *locale) foldersChart(fs []folderTotal) template.HTML {
	var rows []folderTotal
	for _, f := range fs {
		if f.DeleteBytes > 0 && len(rows) < 10 {
			rows = append(rows, f)
		}
	}
	if len(rows) == 0 {
		return ""
	}
	maxB := float64(rows[0].DeleteBytes)
	const rowH, labelW, barW = 22, 220, 300
	h := rowH*len(rows) + 8
	var b strings.Builder
	title := html.EscapeString(l.text("chart.folders.title"))
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg"><title>%s</title>`, labelW+barW+90, h, title, title)
	for i, f := range rows {
		name := f.Path
		if name == "" {
			name = l.text("preview.root")
		}
		if r := []rune(name); len(r) > 34 {
			name = "…" + string(r[len(r)-33:])
		}
		yy := 4 + i*rowH
		w := float64(barW) * float64(f.DeleteBytes) / maxB
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" text-anchor="end" fill="#333">%s</text>`, labelW-6, yy+14, html.EscapeString(name))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="16" fill="%s"/>`, labelW, yy+2, max(w, 1), colorReclaim)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="11" fill="#333">%s</text>`, float64(labelW)+max(w, 1)+6, yy+14, html.EscapeString(l.bytes(f.DeleteBytes)))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
