package deltalog

import (
	"errors"
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

// calendarInterval is Spark's CalendarInterval: months and days are Java ints, microseconds a
// long.
type calendarInterval struct {
	months, days int32
	micros       int64
}

// errIntervalOverflow is returned (wrapped) by parseCalendarInterval for a count that
// overflows a field of the interval, where Spark fails with an ArithmeticException.
var errIntervalOverflow = errors.New("a count overflows Spark's interval (days are a 32-bit int, microseconds a 64-bit long)")

// parseCalendarInterval parses in exactly as Delta Spark parses an interval table property:
// DeltaConfigs.parseCalendarInterval (Java String.trim, lower-case, "interval " prefixed when
// absent) and then Spark's IntervalUtils.stringToInterval, state for state. It accepts what
// Spark accepts and refuses what Spark refuses, so that deltavacuum neither writes a value
// Spark cannot read nor reads a value Spark would not read:
//
//   - one or more "<number> <unit>" pairs separated by whitespace (Java's
//     Character.isWhitespace on bytes: \t \n \v \f \r \x1c-\x1f and space), the number and its
//     unit separated by whitespace too;
//   - a number is an optional sign ('+' or '-', whitespace may follow it), ASCII digits and at
//     most one '.'; a fractional part (up to 9 digits, truncated to microseconds) is allowed
//     on seconds only ("'days' cannot have fractional part"); no exponents, no '_', no hex;
//   - units year, month, week, day, hour, minute, second, millisecond, microsecond, each
//     with an optional trailing 's'; nothing else, no abbreviations;
//   - every count is checked for overflow as Spark does (Math.addExact, multiplyExact,
//     toIntExact): digits accumulate in a long, days and months are ints, microseconds a long.
//
// Any byte outside ASCII is refused: Spark compares bytes with ASCII digits, whitespace and
// unit names, so a non-ASCII character (a fullwidth digit, a no-break space, a Cyrillic 'а')
// fails there too (Java's lower-casing maps only the Kelvin sign to ASCII, 'k', which no unit
// holds).
func parseCalendarInterval(in string) (calendarInterval, error) {
	bad := func(format string, args ...any) (calendarInterval, error) {
		return calendarInterval{}, fmt.Errorf("invalid interval %q: "+format, append([]any{in}, args...)...)
	}
	// Java's String.trim: every character up to U+0020 at either end.
	s := strings.TrimFunc(in, func(r rune) bool { return r <= ' ' })
	if s == "" {
		return bad("empty; expected a number and a unit, such as 'interval 7 days'")
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return bad("only ASCII letters, digits and spaces are allowed")
		}
	}
	s = asciiLower(s)
	if !strings.HasPrefix(s, "interval ") {
		s = "interval " + s
	}
	const (
		trimBeforeSign = iota
		sign
		trimBeforeValue
		value
		valueFractionalPart
		trimBeforeUnit
		unitBegin
		unitSuffix
		unitEnd
	)
	const initialFractionScale = int64(time.Second / 10) // nanoseconds of the first digit
	var (
		iv            calendarInterval
		state         = trimBeforeSign
		i             = len("interval ")
		current       int64
		negative      bool
		fraction      int64
		fractionScale int64
		pointPrefixed bool
	)
	overflow := func() (calendarInterval, error) {
		return calendarInterval{}, fmt.Errorf("invalid interval %q: %w", in, errIntervalOverflow)
	}
	for i < len(s) {
		b := s[i]
		switch state {
		case trimBeforeSign, trimBeforeValue, trimBeforeUnit:
			if javaWhitespace(b) {
				i++
			} else {
				state++ // sign, value, unitBegin
			}
		case sign:
			current, fraction, fractionScale, pointPrefixed = 0, 0, -1, false
			state = trimBeforeValue
			switch {
			case b == '-':
				negative = true
				i++
			case b == '+':
				negative = false
				i++
			case '0' <= b && b <= '9':
				negative = false
			case b == '.':
				negative = false
				fractionScale, pointPrefixed = initialFractionScale, true
				i++
				state = valueFractionalPart
			default:
				return bad("%q is not a number", word(s, i))
			}
		case value:
			switch {
			case '0' <= b && b <= '9':
				c, ok := mulExact(current, 10)
				if ok {
					c, ok = addExact(c, int64(b-'0'))
				}
				if !ok {
					return overflow()
				}
				current = c
			case javaWhitespace(b):
				state = trimBeforeUnit
			case b == '.':
				fractionScale = initialFractionScale
				state = valueFractionalPart
			default:
				return bad("%q is not a number", word(s, i))
			}
			i++
		case valueFractionalPart:
			switch {
			case '0' <= b && b <= '9' && fractionScale > 0:
				fraction += int64(b-'0') * fractionScale
				fractionScale /= 10
			case javaWhitespace(b) && (!pointPrefixed || fractionScale < initialFractionScale):
				fraction /= int64(time.Microsecond)
				state = trimBeforeUnit
			case '0' <= b && b <= '9':
				return bad("more than 9 digits after the point")
			default:
				return bad("%q is not a number", word(s, i))
			}
			i++
		case unitBegin:
			if b != 's' && fractionScale >= 0 {
				return bad("only seconds may have a fractional part, not %q", word(s, i))
			}
			if negative {
				current, fraction = -current, -fraction
			}
			var u *sparkUnit
			for k := range sparkUnits {
				if strings.HasPrefix(s[i:], sparkUnits[k].name) {
					u = &sparkUnits[k]
					break
				}
			}
			if u == nil {
				return bad("unknown unit %q (use week, day, hour, minute, second, millisecond or microsecond)", word(s, i))
			}
			var ok bool
			switch u.field {
			case 'm':
				ok = addToInt(&iv.months, current, u.size)
			case 'd':
				ok = addToInt(&iv.days, current, u.size)
			default:
				var n int64
				if n, ok = mulExact(current, u.size); ok {
					if iv.micros, ok = addExact(iv.micros, n); ok && u.name == "second" {
						iv.micros, ok = addExact(iv.micros, fraction)
					}
				}
			}
			if !ok {
				return overflow()
			}
			i += len(u.name)
			state = unitSuffix
		case unitSuffix:
			switch {
			case b == 's':
				state = unitEnd
			case javaWhitespace(b):
				state = trimBeforeSign
			default:
				return bad("unknown unit %q", word(s, i))
			}
			i++
		case unitEnd:
			if !javaWhitespace(b) {
				return bad("unknown unit %q", word(s, i))
			}
			i++
			state = trimBeforeSign
		}
	}
	switch state {
	case unitSuffix, unitEnd, trimBeforeSign:
		return iv, nil
	case trimBeforeValue:
		return bad("a sign without a number")
	default:
		return bad("expected pairs of a number and a unit, such as 'interval 7 days'")
	}
}

// sparkUnit is a unit of Spark's interval parser: the field it adds to ('m' months, 'd' days,
// 'u' microseconds) and its size there.
type sparkUnit struct {
	name  string
	field byte
	size  int64
}

// sparkUnits are in the order Spark's parser tries them (no name is a prefix of another).
var sparkUnits = []sparkUnit{
	{"year", 'm', 12}, {"week", 'd', 7}, {"day", 'd', 1}, {"hour", 'u', 3_600_000_000},
	{"second", 'u', 1_000_000}, {"month", 'm', 1}, {"minute", 'u', 60_000_000},
	{"millisecond", 'u', 1000}, {"microsecond", 'u', 1},
}

// addToInt adds count units of size to an int field as Spark does, reporting overflow where
// Spark throws: years and weeks are multiplied and added as longs and then narrowed
// (Math.toIntExact(Math.addExact(days, Math.multiplyExact(7, value)))), months and days are
// narrowed first and added as ints (Math.addExact(days, Math.toIntExact(value))), so that
// '-1 days 2147483648 days' fails although its sum fits.
func addToInt(field *int32, count, size int64) bool {
	if size == 1 && count != int64(int32(count)) {
		return false
	}
	n, ok := mulExact(count, size)
	if ok {
		n, ok = addExact(int64(*field), n)
	}
	if !ok || n != int64(int32(n)) {
		return false
	}
	*field = int32(n)
	return true
}

// javaWhitespace is Java's Character.isWhitespace of an ASCII byte, as Spark's interval parser
// applies it to each byte.
func javaWhitespace(b byte) bool {
	return b == ' ' || ('\t' <= b && b <= '\r') || (0x1c <= b && b <= 0x1f)
}

// word is the whitespace-separated word of s that holds byte i, for error messages.
func word(s string, i int) string {
	start, end := i, i
	for start > 0 && !javaWhitespace(s[start-1]) {
		start--
	}
	for end < len(s) && !javaWhitespace(s[end]) {
		end++
	}
	return s[start:end]
}

// asciiLower lower-cases ASCII letters only (strings.ToLower would also fold 'İ' and the
// Kelvin sign, which Java's lower-casing and Spark's matching do not treat alike).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// addExact and mulExact are Java's Math.addExact and multiplyExact: the result, and false
// where Java throws an ArithmeticException.
func addExact(a, b int64) (int64, bool) {
	c := a + b
	return c, (c > a) == (b > 0)
}

func mulExact(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	c := a * b
	return c, c/b == a && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64)
}

// intervalMicros parses a value of an interval property and returns its length in microseconds
// as Spark computes it (DeltaConfigs.getMicroSeconds: days × 86,400,000,000 + microseconds),
// but exactly: Spark's long arithmetic wraps there, deltavacuum's does not. It refuses what
// Spark refuses to read (any parse error, and months: getMicroSeconds asserts there are none)
// and what DeltaConfigs.isValidIntervalConfigValue refuses to write (a negative total).
func intervalMicros(s string) (*big.Int, error) {
	iv, err := parseCalendarInterval(s)
	if err != nil {
		return nil, err
	}
	if iv.months != 0 {
		return nil, fmt.Errorf("invalid interval %q: months and years are not accepted because their length varies; use weeks or days ('365 days' for a year)", s)
	}
	total := new(big.Int).Mul(big.NewInt(int64(iv.days)), big.NewInt(24*3600*1_000_000))
	total.Add(total, big.NewInt(iv.micros))
	if total.Sign() < 0 {
		return nil, fmt.Errorf("invalid interval %q: it must not be negative", s)
	}
	return total, nil
}

// ValidateInterval reports whether s may be written as the value of an interval property:
// Spark parses it (parseCalendarInterval), DeltaConfigs.isValidIntervalConfigValue accepts it
// (no months or years, not negative), and its total length fits the 64-bit count of
// microseconds Spark computes it in. (Spark's own check computes that total with a long that
// wraps: 'interval 213503983 days' passes it, and Spark then reads a retention of about 16
// hours. deltavacuum refuses any total beyond 2^63-1 microseconds, about 292,000 years.)
func ValidateInterval(s string) error {
	total, err := intervalMicros(s)
	if err != nil {
		return err
	}
	if !total.IsInt64() {
		return fmt.Errorf("invalid interval %q: %w", s, errIntervalOverflow)
	}
	return nil
}

// ParseInterval parses the value of an interval table property (the reader's side: the
// retention of a table someone else may have written) as Spark reads it, see
// parseCalendarInterval. Every value Spark cannot read is refused, so that the table is not
// vacuumed under a retention no other engine agrees on: a fraction of any unit but seconds
// ('1.5 hours', which an earlier deltavacuum accepted), counts that overflow Spark's fields,
// anything but ASCII. Months and years and negative totals are refused too (Spark would
// assert, or vacuum with a negative retention). A total longer than a time.Duration holds
// (about 292 years), including a total beyond 2^63-1 microseconds that Spark would wrap to
// some shorter or negative retention, is as long as a Duration can be, which keeps every file:
// never shorter than the retention Spark would use.
func ParseInterval(s string) (time.Duration, error) {
	total, err := intervalMicros(s)
	if err != nil {
		return 0, err
	}
	ns := total.Mul(total, big.NewInt(int64(time.Microsecond)))
	if !ns.IsInt64() {
		return time.Duration(math.MaxInt64), nil
	}
	return time.Duration(ns.Int64()), nil
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
