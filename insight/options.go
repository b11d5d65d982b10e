package insight

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// DefaultWhatIfHours are the retentions of the what-if table when none is given: a day, two,
// three, the Delta default of a week, 30 days and seven years (2555 days, 61 320 hours), the
// retention regulated tables often keep.
var DefaultWhatIfHours = []float64{24, 48, 72, 168, 720, 61320}

// The default price, documented in docs/insight.md: a list price to check against the
// provider's current one.
const (
	DefaultPricePerGBMonth = 0.023
	DefaultCurrency        = "USD"
	DefaultPriceSource     = "default: list price of Amazon S3 Standard (us-east-1, first 50 TB) and of Microsoft OneLake storage, USD 0.023 per GB-month as published in 2024; check your provider's current price and give yours"
)

// Defaults of the other options.
const (
	DefaultForecastDays   = 7
	DefaultTopPartitions  = 10
	DefaultSmallFileBytes = 32 << 20 // the Fabric guidance's small-file size
)

// Limits of the options, so that a typing slip cannot ask for a report nobody can read.
const (
	MaxForecastDays = 3650
	MaxWhatIf       = 64
	MaxPrice        = 1e6
)

// Options control an inspection.
type Options struct {
	// RetainHours is the retention of the VACUUM the report is about (RETAIN n HOURS); nil
	// takes the table's. A retention below the table's is reported, not refused: inspecting
	// deletes nothing, and the report says the run would need the safety check off.
	RetainHours *float64
	// WhatIfHours are the retentions of the what-if table; nil takes DefaultWhatIfHours.
	WhatIfHours []float64
	// ForecastDays is how many days the forecast covers; nil takes DefaultForecastDays.
	ForecastDays *int
	// TopPartitions is how many partitions the report lists; nil takes DefaultTopPartitions.
	TopPartitions *int
	// PricePerGBMonth is the storage price per GiB (2^30 bytes) and month, in Currency; nil
	// takes DefaultPricePerGBMonth in DefaultCurrency.
	PricePerGBMonth *float64
	Currency        string
	// SmallFileBytes is the small-file threshold; 0 takes DefaultSmallFileBytes.
	SmallFileBytes int64
	// Now is the clock; the zero time is time.Now(), read once.
	Now time.Time
	// Inventory replaces the listing, as VACUUM ... USING INVENTORY.
	Inventory vacuum.Walker
	// Lite lists nothing: it reports from the log alone, with the plan of VACUUM LITE (see
	// docs/insight.md).
	Lite bool
	// Readers, when set, finds the table's readers from the snapshot the report is made of
	// (package run's FindReaders, through package session): the plan keeps what they need, as
	// VACUUM does, and the report says what each costs.
	Readers func(ctx context.Context, snap *deltalog.Snapshot) (*ReadersFound, error)
	// From, when set, is a snapshot of the table read already (the service reads one for the
	// policy's retention): it is advanced to the latest version (deltalog.LoadFrom), not read
	// again.
	From *deltalog.Snapshot
}

// settings are Options validated, with the defaults filled in.
type settings struct {
	Options
	whatIf   []float64
	days     int
	top      int
	price    Price
	smallMax int64
}

func (o Options) settle(table string) (settings, error) {
	s := settings{Options: o, whatIf: DefaultWhatIfHours, days: DefaultForecastDays, top: DefaultTopPartitions, smallMax: DefaultSmallFileBytes}
	bad := func(format string, args ...any) (settings, error) {
		return settings{}, fmt.Errorf("inspecting table %s: "+format, append([]any{table}, args...)...)
	}
	if o.RetainHours != nil {
		if err := checkHours(*o.RetainHours); err != nil {
			return bad("retention: %v; give RETAIN n HOURS (--retain-hours n) with n a number of hours, 0 or more", err)
		}
	}
	if o.WhatIfHours != nil {
		if len(o.WhatIfHours) == 0 || len(o.WhatIfHours) > MaxWhatIf {
			return bad("give between 1 and %d what-if retentions, not %d", MaxWhatIf, len(o.WhatIfHours))
		}
		for _, h := range o.WhatIfHours {
			if err := checkHours(h); err != nil {
				return bad("what-if retention: %v; give hours, 0 or more (for example --what-if-hours 24,168)", err)
			}
		}
		s.whatIf = slices.Clone(o.WhatIfHours)
		slices.Sort(s.whatIf)
		s.whatIf = slices.Compact(s.whatIf)
	}
	if o.ForecastDays != nil {
		if *o.ForecastDays < 0 || *o.ForecastDays > MaxForecastDays {
			return bad("forecast of %d days: give 0 to %d days", *o.ForecastDays, MaxForecastDays)
		}
		s.days = *o.ForecastDays
	}
	if o.TopPartitions != nil {
		if *o.TopPartitions < 0 {
			return bad("top %d partitions: give 0 or more", *o.TopPartitions)
		}
		s.top = *o.TopPartitions
	}
	s.price = Price{PerGBMonth: DefaultPricePerGBMonth, Currency: DefaultCurrency, Source: DefaultPriceSource}
	if o.PricePerGBMonth != nil {
		p := *o.PricePerGBMonth
		if math.IsNaN(p) || math.IsInf(p, 0) || p < 0 || p > MaxPrice {
			return bad("price %v per GB-month: give a number from 0 to %g", p, MaxPrice)
		}
		cur := o.Currency
		if cur == "" {
			cur = DefaultCurrency
		}
		s.price = Price{PerGBMonth: p, Currency: cur, Source: "given"}
	} else if o.Currency != "" {
		return bad("a currency (%q) needs a price: give --price-per-gb-month too", o.Currency)
	}
	if len(s.price.Currency) > 16 {
		return bad("currency %q: give a short code such as USD or EUR", s.price.Currency)
	}
	if o.SmallFileBytes < 0 {
		return bad("small-file threshold of %d bytes: give a positive size", o.SmallFileBytes)
	}
	if o.SmallFileBytes > 0 {
		s.smallMax = o.SmallFileBytes
	}
	if o.Lite && o.Inventory != nil {
		return bad("%v", vacuum.ErrInventoryWithLite)
	}
	return s, nil
}

// checkHours says what is wrong with h as a retention (vacuum.RetentionOf decides), in the
// words of an inspection's errors.
func checkHours(h float64) error {
	_, err := vacuum.RetentionOf(h)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, vacuum.ErrRetentionNotANumber):
		return fmt.Errorf("not a number (NaN)")
	case errors.Is(err, vacuum.ErrNegativeRetention):
		return fmt.Errorf("%g hours is negative", h)
	}
	return fmt.Errorf("%g hours is too large", h)
}

// retentionOf is a retention checked already (by checkHours, or a plan's) as a duration.
func retentionOf(h float64) time.Duration {
	d, _ := vacuum.RetentionOf(h)
	return d
}

// cost is the monthly cost of bytes at the price.
func (p Price) cost(bytes int64) float64 { return float64(bytes) / (1 << 30) * p.PerGBMonth }
