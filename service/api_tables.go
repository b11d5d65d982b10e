package service

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/deltavacuum/deltavacuum/service/runner"
	"github.com/deltavacuum/deltavacuum/service/schedule"
	"github.com/deltavacuum/deltavacuum/service/tables"
	"github.com/deltavacuum/deltavacuum/storage/location"
)

// TableInfo is a table as the API lists it.
type TableInfo struct {
	ID         string         `json:"id"`
	Location   string         `json:"location,omitempty"`
	Name       string         `json:"name,omitempty"`
	DryRunOnly bool           `json:"dryRunOnly"`
	Policy     PolicyInfo     `json:"policy"`
	Schedule   *ScheduleInfo  `json:"schedule,omitempty"`
	LastRun    *runner.RunDoc `json:"lastRun,omitempty"`
	Running    string         `json:"running,omitempty"`
	// Health is ok, broken (the table cannot be opened or its log read: Broken says why) or
	// unknown (the service has not opened it yet).
	Health string         `json:"health"`
	Broken *runner.Broken `json:"broken,omitempty"`
}

// PolicyInfo is a table's policy.
type PolicyInfo struct {
	Retention      string  `json:"retention"`
	RetentionHours float64 `json:"retentionHours,omitempty"`
	RetentionCheck bool    `json:"retentionCheck"`
	Mode           string  `json:"mode"`
	FullEvery      string  `json:"fullEvery,omitempty"`
	Trash          bool    `json:"trash"`
	// InspectEvery is how often the service inspects the table on its own, or "off".
	InspectEvery string `json:"inspectEvery"`
}

// ScheduleInfo is a table's schedule and its next planned start.
type ScheduleInfo struct {
	Cron      string     `json:"cron"`
	TimeZone  string     `json:"timezone"`
	Window    string     `json:"window,omitempty"`
	Jitter    string     `json:"jitter,omitempty"`
	NextStart *time.Time `json:"nextStart,omitempty"`
}

func (s *Server) listTables(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, http.StatusOK, map[string]any{"tables": s.tableInfos(r.Context())})
}

// tableInfos are the tables as GET /api/tables and the web page list them.
func (s *Server) tableInfos(ctx context.Context) []TableInfo {
	out := []TableInfo{}
	busy := s.runner.Held()
	all := s.tables.All()
	handled := s.runner.Handled(all)
	for _, t := range all {
		c := t.Cfg
		info := TableInfo{ID: c.ID, Location: location.SafeURI(c.Path), Name: c.Name, DryRunOnly: c.DryRunOnly, Running: busy[c.ID]}
		info.Health, info.Broken = s.runner.Health(c.ID)
		info.Policy = PolicyInfo{Retention: "table", RetentionCheck: c.Policy.RetentionCheck, Mode: string(c.Policy.Mode), Trash: c.Policy.Trash}
		if c.Policy.Retention.Set {
			info.Policy.Retention, info.Policy.RetentionHours = "hours", c.Policy.Retention.Hours
			if c.Policy.Retention.Preset != "" {
				info.Policy.Retention = c.Policy.Retention.Preset
			}
		}
		info.Policy.InspectEvery = "off"
		if c.Policy.InspectEvery > 0 {
			info.Policy.InspectEvery = c.Policy.InspectEvery.String()
		}
		if c.Policy.FullEvery > 0 {
			info.Policy.FullEvery = c.Policy.FullEvery.String()
		}
		if sc := c.Schedule; sc != nil {
			si := &ScheduleInfo{Cron: sc.Cron.String(), TimeZone: sc.TimeZone}
			if sc.Window != nil {
				si.Window = sc.Window.Start.String() + "-" + sc.Window.End.String()
			}
			if sc.Jitter > 0 {
				si.Jitter = sc.Jitter.String()
			}
			if h, ok := handled[c.ID]; ok {
				if n := schedule.NextStart(runner.ScheduleTable(c), h); !n.IsZero() {
					n = n.UTC()
					si.NextStart = &n
				}
			}
			info.Schedule = si
		}
		out = append(out, info)
	}
	// The tables' last runs, their records read at once.
	ids := make([]string, len(all))
	for i, t := range all {
		ids[i] = t.Cfg.ID
	}
	for i, d := range s.runner.LastRuns(ctx, ids) {
		if d.ID != "" {
			d := docWithWhy(d)
			out[i].LastRun = &d
		}
	}
	return out
}

// tableOf is the table the request's path names, or nil after a 404.
func (s *Server) tableOf(w http.ResponseWriter, r *http.Request) *tables.Table {
	t, ok := s.tables.Lookup(r.PathValue("id"))
	if !ok {
		s.fail(w, r, of(errNotFound, fmt.Errorf("no table %q in the configuration (GET /api/tables lists them)", r.PathValue("id"))))
		return nil
	}
	return t
}
