package schedule

import (
	"testing"
	"time"
)

// TestWaitingTablesTakeTurns: with more tables due every minute than slots, missed fires
// merge into the newest, so the waiting tables share its planned start; the one waiting
// longest goes first, and every table runs in turn (not the same ones by id every tick).
func TestWaitingTablesTakeTurns(t *testing.T) {
	var tables []*Table
	for _, id := range []string{"a", "b", "c", "d"} {
		tables = append(tables, &Table{ID: id, Cron: mustCron(t, "* * * * *", time.UTC)})
	}
	start := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	s, err := New(tables, 1, nil, start)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for m := 1; m <= 8; m++ {
		starts, err := s.Tick(start.Add(time.Duration(m) * time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range starts {
			order = append(order, st.Table)
			s.Finished(st.Table)
		}
	}
	if got, want := len(order), 8; got != want {
		t.Fatalf("%d starts, want %d", got, want)
	}
	seen := map[string]int{}
	for i, id := range order {
		seen[id]++
		if i >= 4 && order[i] != order[i-4] {
			t.Errorf("start %d is %s, want the turn of %s again (%v)", i, id, order[i-4], order)
		}
	}
	if len(seen) != 4 {
		t.Errorf("only %v ran: %v", seen, order)
	}
}
