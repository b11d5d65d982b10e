package schedule

import (
	"fmt"
	"time"
)

// Add schedules table t, its fires handled up to handled (a table found by discovery: from
// the state database, or the moment it was found).
func (s *Scheduler) Add(t *Table, handled time.Time) error {
	if t.Cron == nil {
		return fmt.Errorf("schedule: table %s has no cron", t.ID)
	}
	if _, dup := s.handled[t.ID]; dup {
		return fmt.Errorf("schedule: table %s given twice", t.ID)
	}
	s.handled[t.ID] = handled
	s.tables = append(s.tables, t)
	return nil
}

// Remove stops scheduling table id (no longer found). A run in progress keeps its slot until
// Finished.
func (s *Scheduler) Remove(id string) {
	for i, t := range s.tables {
		if t.ID == id {
			s.tables = append(s.tables[:i:i], s.tables[i+1:]...)
			break
		}
	}
	delete(s.handled, id)
}

// Has reports whether table id is scheduled.
func (s *Scheduler) Has(id string) bool {
	_, ok := s.handled[id]
	return ok
}
