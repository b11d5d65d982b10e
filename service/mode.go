package service

import (
	"context"
	"github.com/deltavacuum/deltavacuum/session"

	"github.com/deltavacuum/deltavacuum/vacuum"
)

// ranMode is the mode a run ran in: its plan's (FULL after a LITE the log could not serve),
// else the one requested.
func ranMode(req session.VacuumRequest, res *vacuum.Result) string {
	if res != nil && res.Plan != nil && res.Plan.Mode != "" {
		return string(res.Plan.Mode)
	}
	return req.Mode
}

// recordMode records the mode of run id in the state when it ran in another than it started.
func (s *Server) recordMode(ctx context.Context, id, started, ran string) {
	if ran == started {
		return
	}
	if err := s.st.SetMode(ctx, id, ran); err != nil {
		s.log.Error("recording the mode of the run", "run", id, "error", err.Error())
	}
}
