package vacuum

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
)

// The retention of a run (section 4), in one place: what a number of hours may be, its
// rounding, the safety check against the table's retention, and the policy's floor. The CLI,
// SQL, insight and the service take it from here.

// RetentionCheckKey is the session setting that turns the retention safety check off.
const RetentionCheckKey = "spark.databricks.delta.retentionDurationCheck.enabled"

// MaxRetentionHours is the longest retention: a hundred years (more is a typing mistake), for
// RETAIN n HOURS, a policy and a one-off retention of the service alike.
const MaxRetentionHours = 100 * 366 * 24

// The refusals of a number of hours that is no retention (HoursError.Err).
var (
	// ErrNegativeRetention is the refusal of RETAIN with a negative number of hours.
	ErrNegativeRetention = errors.New("Retention period for Vacuum can't be less than 0 hours.")
	// ErrRetentionNotANumber is the refusal of RETAIN NaN HOURS.
	ErrRetentionNotANumber = errors.New("the retention is not a number (NaN)")
	// ErrRetentionTooLarge is the refusal of more hours than MaxRetentionHours (+Inf included).
	ErrRetentionTooLarge = errors.New("the retention is too large")
)

// HoursError is the refusal of a number of hours that is no retention: Err is
// ErrRetentionNotANumber, ErrNegativeRetention or ErrRetentionTooLarge.
type HoursError struct {
	Hours float64
	Err   error
}

func (e *HoursError) Error() string {
	switch e.Err {
	case ErrRetentionNotANumber:
		return e.Err.Error() + "; give RETAIN n HOURS (--retain-hours n) with n a number of hours, 0 or more"
	case ErrRetentionTooLarge:
		return fmt.Sprintf("retention of %g hours is too large: give a number of hours from 0 to %d (a hundred years)", e.Hours, MaxRetentionHours)
	case ErrNegativeRetention:
		return e.Err.Error() + fmt.Sprintf(" Give a number of hours from 0 to %d.", MaxRetentionHours)
	}
	return e.Err.Error()
}

func (e *HoursError) Unwrap() error { return e.Err }

// RetentionOf is RETAIN n HOURS as a duration: n rounded half up to whole hours, as the
// reference did. NaN, a negative number and more than MaxRetentionHours are refused with a
// *HoursError.
func RetentionOf(hours float64) (time.Duration, error) {
	switch {
	case math.IsNaN(hours):
		return 0, &HoursError{Hours: hours, Err: ErrRetentionNotANumber}
	case hours < 0:
		return 0, &HoursError{Hours: hours, Err: ErrNegativeRetention}
	case math.IsInf(hours, 1) || hours > MaxRetentionHours:
		return 0, &HoursError{Hours: hours, Err: ErrRetentionTooLarge}
	}
	return time.Duration(math.Floor(hours+0.5)) * time.Hour, nil
}

// RetentionError is the refusal of the retention safety check.
type RetentionError struct {
	Table          string
	RetentionHours float64
	TableHours     float64
}

func (e *RetentionError) Error() string {
	return fmt.Sprintf("table %s: refusing to vacuum with a retention of %g hours, shorter than the table's retention of %g hours (delta.deletedFileRetentionDuration). "+
		"If writers are still writing to this table, files they are about to commit could be deleted and the table corrupted. "+
		"If you are certain no operation (insert, upsert, delete, optimize) is running on this table, turn the check off by setting:\n"+
		"%s = false\nIf you are not sure, use a retention of at least %d hours.",
		e.Table, e.RetentionHours, e.TableHours, RetentionCheckKey, int64(math.Ceil(e.TableHours)))
}

// CheckRetention applies to a run of snap with opts what NewPlanner applies to its retention
// (opts.RetainHours, opts.DisableRetentionCheck), reading nothing: the refusal a run at that
// retention would end with (a *RetentionError for the safety check, a *HoursError), for a
// caller that must refuse it before it accepts the run (the service's one-off retentions).
func CheckRetention(snap *deltalog.Snapshot, opts Options) error {
	_, _, err := retention(snap, opts)
	return err
}

// retention resolves the retention of a run (RETAIN n HOURS, else the table's) and applies the
// safety check: a retention shorter than the table's is refused unless the check is off.
func retention(snap *deltalog.Snapshot, opts Options) (run, table time.Duration, err error) {
	table, err = snap.DeletedFileRetention()
	if err != nil {
		return 0, 0, err
	}
	if opts.RetainHours == nil {
		return table, table, nil
	}
	run, err = RetentionOf(*opts.RetainHours)
	if err != nil {
		return 0, 0, fmt.Errorf("table %s: %w", snap.Location, err)
	}
	if !opts.DisableRetentionCheck && run < table {
		return 0, 0, &RetentionError{Table: snap.Location, RetentionHours: run.Hours(), TableHours: table.Hours()}
	}
	return run, table, nil
}

// PolicyRetainHours is the retention of a run a policy asks hours for (nil: the table's own):
// never shorter than a delta.deletedFileRetentionDuration the table sets itself, so that a
// table that asks to keep its files longer keeps them. A table without the property takes
// the policy's hours as they are: a policy shorter than the default week is refused by the
// safety check unless the policy turned the check off.
func PolicyRetainHours(snap *deltalog.Snapshot, hours *float64) (*float64, error) {
	if hours == nil {
		return nil, nil
	}
	h := *hours
	floor, set, err := RetentionFloor(snap)
	if err != nil {
		return nil, err
	}
	if set {
		h = max(h, floor.Hours())
	}
	return &h, nil
}

// ErrBelowFloor is matched by the refusal of a one-off retention below the retention the table
// sets itself (OneOffRetainHours).
var ErrBelowFloor = errors.New("below the table's own retention")

// OneOffRetainHours checks a one-off retention of hours (the service's preview and the run of
// its plan, a Fabric job's retentionPeriod) before anything runs, by the rules RETAIN n HOURS
// follows (RetentionOf, the safety check unless checkDisabled) and the floor a policy never
// goes below (RetentionFloor): refused, not raised, below a retention the table sets itself.
func OneOffRetainHours(snap *deltalog.Snapshot, hours float64, checkDisabled bool) (*float64, error) {
	if _, err := RetentionOf(hours); err != nil {
		return nil, fmt.Errorf("table %s: %w", snap.Location, err)
	}
	floor, set, err := RetentionFloor(snap)
	if err != nil {
		return nil, err
	}
	if set && hours < floor.Hours() {
		return nil, fmt.Errorf("table %s: %v hours is %w of %v hours (%s): a one-off retention never goes below it, nor does a policy",
			snap.Location, hours, ErrBelowFloor, floor.Hours(), deltalog.PropDeletedFileRetention)
	}
	if err := CheckRetention(snap, Options{RetainHours: &hours, DisableRetentionCheck: checkDisabled}); err != nil {
		return nil, err
	}
	return &hours, nil
}

// RetentionFloor is the retention the table sets itself (delta.deletedFileRetentionDuration),
// and whether it sets one: the floor a policy's retention, or the service's one-off retention,
// never goes below. A table without the property has no floor (its default week is the safety
// check's to defend).
func RetentionFloor(snap *deltalog.Snapshot) (time.Duration, bool, error) {
	if _, set := snap.Metadata.Configuration[deltalog.PropDeletedFileRetention]; !set {
		return 0, false, nil
	}
	d, err := snap.DeletedFileRetention()
	return d, err == nil, err
}
