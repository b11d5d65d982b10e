package service

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/deltavacuum/deltavacuum/vacuum"
)

// retentionPeriodHours reads a Fabric job's vacuumSettings.retentionPeriod as hours: d:hh:mm:ss
// as Fabric documents it (7:00:00:00 is seven days), d.hh:mm:ss as .NET writes a TimeSpan
// (7.00:00:00), or hh:mm:ss without days, as Fabric's pattern allows; hours 0 to 23, minutes
// and seconds 0 to 59, each of one or two digits, the days of at most as many as the service's
// longest retention (vacuum.MaxRetentionHours, checked by vacuum.RetentionOf as RETAIN n HOURS is). Nothing else: no sign, no blank, no other
// digit than 0 to 9. The run's retention is whole hours (the library rounds half up, as it
// rounds a preview's retentionHours).
func retentionPeriodHours(s string) (float64, error) {
	bad := func(why string) (float64, error) {
		return 0, fmt.Errorf("%q is not a retention period: %s; write d:hh:mm:ss (7:00:00:00 is seven days) or d.hh:mm:ss", s, why)
	}
	days, clock := "", s
	switch parts := strings.Split(s, ":"); {
	case len(parts) == 4:
		days, clock = parts[0], strings.Join(parts[1:], ":")
	case len(parts) == 3 && strings.Contains(parts[0], "."):
		d, h, _ := strings.Cut(parts[0], ".")
		days, clock = d, h+":"+parts[1]+":"+parts[2]
	case len(parts) == 3:
	default:
		return bad("it has not the form of one")
	}
	var n [3]int
	for i, f := range strings.Split(clock, ":") {
		v, err := smallNumber(f, 2)
		if err != nil {
			return bad(err.Error())
		}
		n[i] = v
	}
	if n[0] > 23 || n[1] > 59 || n[2] > 59 {
		return bad("its hours must be 0 to 23, its minutes and seconds 0 to 59")
	}
	d := 0
	if clock != s {
		v, err := smallNumber(days, 6)
		if err != nil {
			return bad("its days: " + err.Error())
		}
		d = v
	}
	h := float64((d*24+n[0])*3600+n[1]*60+n[2]) / 3600
	if _, err := vacuum.RetentionOf(h); err != nil {
		return 0, fmt.Errorf("%q is %v hours: %w", s, h, err)
	}
	return h, nil
}

// smallNumber reads 1 to most ASCII digits.
func smallNumber(f string, most int) (int, error) {
	if f == "" || len(f) > most {
		return 0, fmt.Errorf("each number has 1 to %d digits", most)
	}
	for i := 0; i < len(f); i++ {
		if f[i] < '0' || f[i] > '9' {
			return 0, errors.New("only the digits 0 to 9 are numbers")
		}
	}
	return strconv.Atoi(f)
}
