package vacuum

import (
	"testing"
	"time"
)

// TestVerdictRules checks the rule an observer is told for each kind of entry, one case per
// rule, and that a plan with an observer is the plan without one.
func TestVerdictRules(t *testing.T) {
	tb := newTable(t, tableSpec{partitionColumns: []string{"p"}})
	dv := dvU("", z85)
	dvKey := "deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin"
	tb.commit(add("live.parquet"), addDV("p=1/dv.parquet", dv), add("retained.parquet"), add("expired.parquet"), add("Case.parquet"))
	var ones [16]byte
	for i := range ones {
		ones[i] = 1
	}
	dv2, dv2Key := dvU("", z85Encode(ones)), "deletion_vector_01010101-0101-0101-0101-010101010101.bin"
	tb.file(dv2Key, 30*day)
	tb.commit(remove("retained.parquet", 2*day), remove("expired.parquet", 10*day), remove("young.parquet", 10*day),
		removeDV("gone.parquet", 2*day, dv2))
	for _, k := range []string{"live.parquet", "p=1/dv.parquet", dvKey, "retained.parquet", "expired.parquet", "untracked.parquet", "case.parquet", "_tmp/x.parquet", ".x", "p=1/_SUCCESS"} {
		tb.file(k, 30*day)
	}
	tb.file("young.parquet", time.Hour)
	tb.file("nested/_delta_log/00000000000000000000.json", 30*day)
	tb.file("nested/a.parquet", 30*day)
	want := map[string]Rule{
		"live.parquet":      RuleLive,
		"p=1/dv.parquet":    RuleLive,
		dvKey:               RuleLiveDV,
		"retained.parquet":  RuleRetained,
		dv2Key:              RuleRetainedDV,
		"expired.parquet":   RuleUnreferenced,
		"untracked.parquet": RuleUnreferenced,
		"young.parquet":     RuleTooNew,
		"case.parquet":      RuleOtherSpelling,
		"_tmp/":             RuleHidden,
		".x":                RuleHidden,
		"p=1/_SUCCESS":      RuleHidden,
		"p=1/":              RuleDirectory,
		"nested/":           RuleNestedTable,
		"nested/a.parquet":  RuleNestedTable,
	}
	got := map[string]Verdict{}
	opts := Options{Observe: func(v Verdict) { got[v.Object.Key] = v }}
	observed := tb.plan(opts)
	for k, rule := range want {
		if got[k].Rule != rule {
			t.Errorf("%s: rule %q, want %q", k, got[k].Rule, rule)
		}
	}
	if v := got["retained.parquet"]; v.NewestRemoval != now.Add(-2*day).UnixMilli() || v.Reason != ReasonTombstone {
		t.Errorf("retained: newest removal %d, reason %q; want the remove's time and tombstone", v.NewestRemoval, v.Reason)
	}
	if v := got["young.parquet"]; v.Reason != ReasonTombstone || v.NewestRemoval != now.Add(-10*day).UnixMilli() {
		t.Errorf("young: reason %q, removal %d", v.Reason, v.NewestRemoval)
	}
	if v := got["untracked.parquet"]; v.Reason != ReasonUntracked || v.NewestRemoval != -1 {
		t.Errorf("untracked: reason %q, removal %d", v.Reason, v.NewestRemoval)
	}
	plain := tb.plan(Options{})
	if plain.Files.Len() != observed.Files.Len() || plain.SizeOfDataToDelete != observed.SizeOfDataToDelete {
		t.Errorf("observing changed the plan: %v, without: %v", deleted(observed), deleted(plain))
	}
	for k, v := range got {
		if _, planned := deleted(observed)[k]; v.Deletes() != planned {
			t.Errorf("%s: Deletes() %v, planned %v", k, v.Deletes(), planned)
		}
	}
}

// TestVerdictDeletableAt checks the cutoff rule of each kind of verdict against plans made at
// other cutoffs.
func TestVerdictDeletableAt(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.commit(add("a.parquet"), add("b.parquet"))
	tb.commit(remove("a.parquet", 3*day), remove("b.parquet", 1*day))
	tb.file("a.parquet", 30*day)
	tb.file("b.parquet", 30*day)
	tb.file("c.parquet", 2*day)
	got := map[string]Verdict{}
	tb.plan(Options{RetainHours: hours(48), DisableRetentionCheck: true, Observe: func(v Verdict) { got[v.Object.Key] = v }})
	for _, h := range []float64{0, 12, 24, 47, 48, 49, 71, 72, 73, 100} {
		plan := deleted(tb.plan(Options{RetainHours: hours(h), DisableRetentionCheck: true}))
		cutoff := now.Add(-time.Duration(h) * time.Hour)
		for _, k := range []string{"a.parquet", "b.parquet", "c.parquet"} {
			_, planned := plan[k]
			if got[k].DeletableAt(cutoff) != planned {
				t.Errorf("retention %gh, %s (%s): DeletableAt %v, planned %v", h, k, got[k].Rule, !planned, planned)
			}
		}
	}
}

// TestVerdictDeletableFrom: the cutoff DeletableFrom gives is the first at which DeletableAt
// holds, for a tombstone inside the retention and for a file too new.
func TestVerdictDeletableFrom(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.commit(add("a.parquet"))
	tb.commit(remove("a.parquet", 2*day))
	tb.file("a.parquet", 30*day)
	tb.file("young.parquet", time.Hour)
	got := map[string]Verdict{}
	tb.plan(Options{Observe: func(v Verdict) { got[v.Object.Key] = v }})
	for k, want := range map[string]time.Time{
		"a.parquet":     time.UnixMilli(now.Add(-2*day).UnixMilli() + 1),
		"young.parquet": now.Add(-time.Hour + time.Nanosecond),
	} {
		v := got[k]
		from := v.DeletableFrom()
		if !from.Equal(want) || !v.DeletableAt(from) || v.DeletableAt(from.Add(-time.Nanosecond)) {
			t.Errorf("%s (%s): from %v, want %v; DeletableAt there %v, just before %v", k, v.Rule, from, want, v.DeletableAt(from), v.DeletableAt(from.Add(-time.Nanosecond)))
		}
	}
}
