package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/runner"
	"github.com/deltavacuum/deltavacuum/service/tables"
)

// webhook posts events to a URL: failed runs (run.failed) and runs that found more untracked
// files than the run before (untracked.grew). Delivery is in the background, a bounded number of
// attempts with backoff: a webhook that is slow, refuses or is unreachable never holds up or
// changes a run.
type webhook struct {
	*tables.Env
	url  string
	host string // for logs: the URL may carry a secret
	// attempts and backoff bound the delivery: attempt i+1 waits backoff(i) after attempt i.
	attempts int
	backoff  func(i int) time.Duration
	sleep    func(ctx context.Context, d time.Duration) error
	client   *http.Client
	wg       sync.WaitGroup
	failures prometheus.Counter // deliveries given up
	on       map[string]bool    // the events posted (config: on)
}

// newWebhook returns the webhook w configures; its URL (a secret) goes to the redactor.
func newWebhook(sh *tables.Env, w *config.Webhook, getenv func(string) string, failures prometheus.Counter) (*webhook, error) {
	u, err := w.ResolveURL(getenv)
	if err != nil {
		return nil, err
	}
	sh.Red.Add(u)
	sh.Red.AddURI(u)
	pu, _ := url.Parse(u)
	if pu.Path != "" && pu.Path != "/" {
		sh.Red.Add(pu.Path) // chat webhooks carry their secret in the path
	}
	on := map[string]bool{}
	for _, e := range w.On {
		on[e] = true
	}
	return &webhook{
		Env: sh, failures: failures, url: u, host: pu.Scheme + "://" + pu.Host, attempts: 4, on: on,
		backoff: func(i int) time.Duration { return time.Duration(1<<i) * time.Second },
		sleep:   sleepCtx,
		// No redirect is followed: the body would go where the configuration did not say.
		client: &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}, nil
}

// FailedRunEvent is the body of a webhook post.
type FailedRunEvent struct {
	// Event is "run.failed".
	Event    string `json:"event"`
	Table    string `json:"table"`
	Location string `json:"location,omitempty"`
	// Run is the run as the API shows it: its status, error, end and figures read from its run
	// record (or its refusal, when it wrote none).
	Run runner.Run `json:"run"`
	// Undo says what to do about what the run deleted.
	Undo string `json:"undo,omitempty"`
}

// RunFailed posts the failed run r of table t, in the background; ctx (the runner's) ends the
// retries at shutdown.
func (h *webhook) RunFailed(ctx context.Context, r runner.Run, t *config.Table) {
	if !h.on["failed"] {
		return
	}
	ev := FailedRunEvent{Event: "run.failed", Table: t.ID, Location: t.Path, Run: r}
	if r.RecordID != "" {
		ev.Undo = "deltavacuum undo " + t.Path + " --run " + r.RecordID + " (POST /api/runs/" + r.ID + "/undo)"
	}
	h.send(ctx, r.ID, ev)
}

// UntrackedGrewEvent is the body of a webhook post when a run's plan holds more untracked files
// (files no commit names: what failed or unfinished writers leave) than the table's run before.
type UntrackedGrewEvent struct {
	// Event is "untracked.grew".
	Event    string `json:"event"`
	Table    string `json:"table"`
	Location string `json:"location,omitempty"`
	// Run and PreviousRun are the ids of the two runs compared.
	Run         string `json:"run"`
	PreviousRun string `json:"previousRun"`
	// Untracked are the untracked files of the run's plan, Previous those of the run before.
	Untracked run.Untracked `json:"untracked"`
	Previous  run.Untracked `json:"previous"`
	// Folders are the folders holding the most of them now, each with the files the run before
	// found there (0 also when that folder was not among the run before's folders).
	Folders []UntrackedFolder `json:"folders"`
	// Text says it in one line (chat webhooks show it).
	Text string `json:"text"`
}

// UntrackedFolder is a folder of an untracked.grew event.
type UntrackedFolder struct {
	run.FolderCount
	PreviousFiles int64 `json:"previousFiles"`
}

// UntrackedGrew posts the growth g in the background.
func (h *webhook) UntrackedGrew(ctx context.Context, g runner.UntrackedGrowth) {
	if h.on["untracked.grew"] {
		h.send(ctx, g.Run, untrackedGrewEvent(g))
	}
}

// untrackedGrewEvent is the webhook's body for the growth g: the folders of its run with what the
// run before found in each, and one line of text.
func untrackedGrewEvent(g runner.UntrackedGrowth) UntrackedGrewEvent {
	u, prev := g.Untracked, g.Previous
	before := map[string]int64{}
	for _, f := range prev.Folders {
		before[f.Folder] = f.Files
	}
	ev := UntrackedGrewEvent{Event: "untracked.grew", Table: g.Table.ID, Location: g.Table.Path, Run: g.Run, PreviousRun: g.PreviousRun,
		Untracked: u, Previous: prev, Folders: []UntrackedFolder{}}
	var where []string
	for _, f := range u.Folders {
		ev.Folders = append(ev.Folders, UntrackedFolder{FolderCount: f, PreviousFiles: before[f.Folder]})
		name := f.Folder
		if name == "" {
			name = "(table root)"
		}
		where = append(where, fmt.Sprintf("%s %d", name, f.Files))
	}
	ev.Text = fmt.Sprintf("deltavacuum serve: table %s: run %s found %d untracked files (%s), %d more than run %s (%d): failed or unfinished writes leave them. Most in: %s",
		g.Table.ID, g.Run, u.Files, humanBytes(u.Bytes), u.Files-prev.Files, g.PreviousRun, prev.Files, strings.Join(where, ", "))
	return ev
}

// send posts ev (redacted) in the background, logging its delivery under run id.
func (h *webhook) send(ctx context.Context, id string, ev any) {
	b, err := json.Marshal(ev)
	if err != nil {
		return
	}
	b = []byte(h.Red.String(string(b)))
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		if err := h.deliver(ctx, b); err != nil {
			h.Log.Warn("webhook not delivered", "run", id, "webhook", h.host, "error", h.Red.String(err.Error()))
			h.failures.Inc()
			return
		}
		h.Log.Info("webhook delivered", "run", id, "webhook", h.host)
	}()
}

// deliver posts body until a 2xx answer, at most h.attempts times; ctx (the server's) ends
// the retries at shutdown.
func (h *webhook) deliver(ctx context.Context, body []byte) error {
	var last error
	for i := 0; i < h.attempts; i++ {
		if i > 0 {
			if err := h.sleep(ctx, h.backoff(i-1)); err != nil {
				return errors.Join(last, err)
			}
		}
		last = h.post(ctx, body)
		if last == nil {
			return nil
		}
		var perm permanentError
		if errors.As(last, &perm) {
			return last
		}
	}
	return fmt.Errorf("%d attempts: %w", h.attempts, last)
}

type permanentError struct{ error }

func (h *webhook) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return permanentError{errors.New("the webhook URL does not make a request")}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "deltavacuum-serve")
	resp, err := h.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text names the URL, which may carry a secret
		}
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout:
		return fmt.Errorf("the webhook answered %s", resp.Status)
	default:
		return permanentError{fmt.Errorf("the webhook answered %s (not retried)", resp.Status)}
	}
}

// waitWebhooks waits for the deliveries in progress (tests).
func (s *Server) waitWebhooks() {
	if s.hook != nil {
		s.hook.wg.Wait()
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
