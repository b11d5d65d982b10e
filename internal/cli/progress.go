package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/deltavacuum/deltavacuum/vacuum"
)

// progress renders live counters on standard error: a line redrawn in place on a terminal,
// JSON events (one object per line) for pipelines, or nothing.
type progress struct {
	w        io.Writer
	mode     string // "tty", "json" or "none"
	plain    bool   // NO_COLOR: no escape sequence, the line is padded instead of cleared
	counters *vacuum.Counters
	stop     chan struct{}
	done     chan struct{}
}

// startProgress starts a display for mode "auto", "json" or "none". "auto" draws on a terminal
// and stays quiet otherwise.
func startProgress(mode string, stderr io.Writer) (*progress, error) {
	switch mode {
	case "auto":
		mode = "none"
		if isTerminal(stderr) && os.Getenv("TERM") != "dumb" {
			mode = "tty"
		}
	case "json", "none":
	default:
		return nil, usagef("--progress must be auto, json or none, got %q", mode)
	}
	p := &progress{w: stderr, mode: mode, plain: os.Getenv("NO_COLOR") != "", counters: vacuum.NewCounters(), stop: make(chan struct{}), done: make(chan struct{})}
	if mode == "none" {
		close(p.done)
		return p, nil
	}
	go p.loop()
	return p, nil
}

func (p *progress) loop() {
	defer close(p.done)
	interval := time.Second
	if p.mode == "tty" {
		interval = 200 * time.Millisecond
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			p.render(true)
			return
		case <-t.C:
			p.render(false)
		}
	}
}

func (p *progress) render(final bool) {
	s := p.counters.Snapshot()
	if p.mode == "json" {
		b, _ := json.Marshal(struct {
			Event string `json:"event"`
			vacuum.Snapshot
		}{"progress", s})
		fmt.Fprintf(p.w, "%s\n", b)
		return
	}
	rate := 0.0
	if s.ElapsedSec > 0 {
		rate = float64(s.Listed) / s.ElapsedSec
		if s.Phase == "deleting" || s.Deleted > 0 {
			rate = float64(s.Deleted) / s.ElapsedSec
		}
	}
	// Clear the line, draw, and return to its start: each drawing ends with '\r' (or '\n' the
	// last time), so the redacting writer of stderr, which holds back unfinished lines,
	// passes it on at once.
	end := "\r"
	if final {
		end = "\n"
	}
	line := fmt.Sprintf("%s: listed %d, candidates %d, deleted %d (%s), %.0f/s", s.Phase, s.Listed, s.Candidates, s.Deleted, humanBytes(s.DeletedBytes), rate)
	if p.plain {
		fmt.Fprintf(p.w, "%-79s%s", line, end)
		return
	}
	fmt.Fprintf(p.w, "\033[K%s%s", line, end)
}

// isTerminal reports whether w (through any redact.Writer) is a terminal: a character device
// such as /dev/null is not one.
func isTerminal(w io.Writer) bool {
	f, ok := underlying(w).(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// underlying returns the writer w writes to, through any redact.Writer.
func underlying(w io.Writer) io.Writer {
	for {
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			return w
		}
		w = u.Unwrap()
	}
}

// Stop ends the display after a final render.
func (p *progress) Stop() {
	if p.mode != "none" {
		close(p.stop)
	}
	<-p.done
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
