package deltalog

import (
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"
)

// Table properties this program reads.
const (
	PropDeletedFileRetention    = "delta.deletedFileRetentionDuration"
	PropLogRetention            = "delta.logRetentionDuration"
	PropCheckpointRetention     = "delta.checkpointRetentionDuration"
	PropEnableInCommitTimestamp = "delta.enableInCommitTimestamps"
	PropUniversalFormats        = "delta.universalFormat.enabledFormats"
)

// Defaults of the interval properties, as the reference has them.
const (
	DefaultDeletedFileRetention = 7 * 24 * time.Hour
	DefaultLogRetention         = 30 * 24 * time.Hour
	DefaultCheckpointRetention  = 2 * 24 * time.Hour
)

var intervalUnits = map[string]*big.Rat{
	"week":        big.NewRat(int64(7*24*time.Hour), 1),
	"day":         big.NewRat(int64(24*time.Hour), 1),
	"hour":        big.NewRat(int64(time.Hour), 1),
	"minute":      big.NewRat(int64(time.Minute), 1),
	"second":      big.NewRat(int64(time.Second), 1),
	"millisecond": big.NewRat(int64(time.Millisecond), 1),
	"microsecond": big.NewRat(int64(time.Microsecond), 1),
}

// ParseInterval parses a calendar interval as the interval table properties hold it: an
// optional "interval" keyword, then one or more "<number> <unit>" pairs, units week, day, hour,
// minute, second, millisecond or microsecond (plural allowed, any case). Months and years are
// rejected: their length in hours is not fixed. A day is exactly 24 hours. Negative totals are
// rejected.
func ParseInterval(s string) (time.Duration, error) {
	fields := strings.Fields(strings.ToLower(strings.TrimSpace(s)))
	if len(fields) > 0 && fields[0] == "interval" {
		fields = fields[1:]
	}
	if len(fields) == 0 || len(fields)%2 != 0 {
		return 0, fmt.Errorf("invalid interval %q: expected pairs of a number and a unit, such as 'interval 7 days'", s)
	}
	total := new(big.Rat)
	for i := 0; i < len(fields); i += 2 {
		n, ok := new(big.Rat).SetString(fields[i])
		if !ok || !decimal(fields[i]) {
			return 0, fmt.Errorf("invalid interval %q: %q is not a number", s, fields[i])
		}
		unit := strings.TrimSuffix(fields[i+1], "s")
		switch unit {
		case "month", "year":
			return 0, fmt.Errorf("invalid interval %q: months and years are not accepted because their length varies; use weeks or days", s)
		}
		m, ok := intervalUnits[unit]
		if !ok {
			return 0, fmt.Errorf("invalid interval %q: unknown unit %q (use week, day, hour, minute, second, millisecond or microsecond)", s, fields[i+1])
		}
		total.Add(total, n.Mul(n, m))
	}
	if total.Sign() < 0 {
		return 0, fmt.Errorf("invalid interval %q: it must not be negative", s)
	}
	if total.Cmp(new(big.Rat).SetInt64(math.MaxInt64)) >= 0 {
		// Longer than a Duration holds (about 292 years): as long as one can be, which keeps
		// every file. (Converting through a float64 could round up to 2^63 and wrap to a
		// negative duration, which would turn the retention check off.)
		return time.Duration(math.MaxInt64), nil
	}
	f, _ := total.Float64()
	if f >= math.MaxInt64 { // rounded up to 2^63
		return time.Duration(math.MaxInt64), nil
	}
	return time.Duration(f), nil
}

// decimal reports whether s is a plain decimal number: digits with at most one '.', an
// optional sign (big.Rat would also take 0x10, 1_000, 1e3 and 1/2).
func decimal(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	digits, dots := 0, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] >= '0' && s[i] <= '9':
			digits++
		case s[i] == '.':
			dots++
		default:
			return false
		}
	}
	return digits > 0 && dots <= 1
}

// DeletedFileRetention returns the table's delta.deletedFileRetentionDuration, or the default
// of one week when unset.
func (s *Snapshot) DeletedFileRetention() (time.Duration, error) {
	return s.intervalProperty(PropDeletedFileRetention, DefaultDeletedFileRetention)
}

// LogRetention returns the table's delta.logRetentionDuration (default 30 days).
func (s *Snapshot) LogRetention() (time.Duration, error) {
	return s.intervalProperty(PropLogRetention, DefaultLogRetention)
}

func (s *Snapshot) intervalProperty(key string, def time.Duration) (time.Duration, error) {
	v, ok := s.Property(key)
	if !ok {
		return def, nil
	}
	d, err := ParseInterval(v)
	if err != nil {
		return 0, fmt.Errorf("table %s: property %s: %w; fix it with ALTER TABLE … SET TBLPROPERTIES", s.Location, key, err)
	}
	return d, nil
}
