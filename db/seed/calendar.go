package seed

import (
	"math"
	"math/rand/v2"
	"time"
)

const day = 24 * time.Hour

// dayStart returns 00:00 UTC of t's day.
func dayStart(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// mondayOnOrBefore returns 00:00 UTC of the Monday of t's ISO week.
func mondayOnOrBefore(t time.Time) time.Time {
	d := dayStart(t)
	back := (int(d.Weekday()) + 6) % 7 // Monday → 0, Sunday → 6
	return d.AddDate(0, 0, -back)
}

// date builds a UTC calendar day.
func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// isTradingDay reports whether the NYSE is open on day d.
func isTradingDay(d time.Time) bool {
	if wd := d.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return false
	}
	return !nyseHoliday(d)
}

// nyseHoliday reports whether day d (a weekday) is a full-day NYSE closure:
// the ten rule-based holidays with their observed dates, and the 2025 national
// day of mourning.
func nyseHoliday(d time.Time) bool {
	y, m, _ := d.Date()
	if d.Equal(date(2025, time.January, 9)) {
		return true
	}
	if d.Equal(easter(y).AddDate(0, 0, -2)) { // Good Friday
		return true
	}
	switch m {
	case time.January:
		// New Year's Day (a Saturday New Year is not observed on Friday).
		if d.Equal(observed(date(y, time.January, 1))) || d.Equal(nthWeekday(y, time.January, time.Monday, 3)) {
			return true
		}
	case time.February:
		return d.Equal(nthWeekday(y, time.February, time.Monday, 3))
	case time.May:
		return d.Equal(lastWeekday(y, time.May, time.Monday))
	case time.June:
		return y >= 2022 && d.Equal(observed(date(y, time.June, 19)))
	case time.July:
		return d.Equal(observed(date(y, time.July, 4)))
	case time.September:
		return d.Equal(nthWeekday(y, time.September, time.Monday, 1))
	case time.November:
		return d.Equal(nthWeekday(y, time.November, time.Thursday, 4))
	case time.December:
		return d.Equal(observed(date(y, time.December, 25)))
	}
	return false
}

// observed moves a Saturday holiday to Friday and a Sunday one to Monday.
func observed(d time.Time) time.Time {
	switch d.Weekday() {
	case time.Saturday:
		return d.AddDate(0, 0, -1)
	case time.Sunday:
		return d.AddDate(0, 0, 1)
	}
	return d
}

// nthWeekday returns the n-th given weekday of a month.
func nthWeekday(y int, m time.Month, wd time.Weekday, n int) time.Time {
	first := date(y, m, 1)
	offset := (int(wd) - int(first.Weekday()) + 7) % 7
	return first.AddDate(0, 0, offset+7*(n-1))
}

// lastWeekday returns the last given weekday of a month.
func lastWeekday(y int, m time.Month, wd time.Weekday) time.Time {
	last := date(y, m+1, 1).AddDate(0, 0, -1)
	back := (int(last.Weekday()) - int(wd) + 7) % 7
	return last.AddDate(0, 0, -back)
}

// easter returns Western Easter Sunday (anonymous Gregorian algorithm).
func easter(y int) time.Time {
	a := y % 19
	b, c := y/100, y%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	dd := (h+l-7*m+114)%31 + 1
	return date(y, time.Month(month), dd)
}

// hourWeights is the relative volume of crypto news by hour of day (UTC):
// quiet in the late US night, busiest when New York and Europe overlap.
var hourWeights = [24]float64{
	0.55, 0.50, 0.50, 0.48, 0.45, 0.45, 0.55, 0.70, 0.85, 0.90, 0.90, 0.95,
	1.10, 1.35, 1.50, 1.45, 1.35, 1.25, 1.20, 1.15, 1.10, 0.95, 0.80, 0.65,
}

// weekdayWeights is the relative volume by day of week, Sunday first.
var weekdayWeights = [7]float64{0.62, 1.0, 1.06, 1.05, 1.04, 0.95, 0.58}

// timeline hands out n increasing timestamps over [start, end), spread
// according to a time-of-day and day-of-week pattern with day-to-day swings.
// Item i is placed at quantile (i+u)/n of the cumulative intensity, so the
// stream is sorted without holding it in memory.
type timeline struct {
	start  time.Time
	end    time.Time
	cum    []float64 // cum[b] = intensity before hour bucket b
	n      int
	i      int
	bucket int
}

// newTimeline prepares the intensity curve; r drives the daily swings.
func newTimeline(r *rand.Rand, start, end time.Time, n int) *timeline {
	hours := int(math.Ceil(float64(end.Sub(start)) / float64(time.Hour)))
	cum := make([]float64, hours+1)
	var z, factor float64
	dayIndex := -1
	for b := 0; b < hours; b++ {
		t := start.Add(time.Duration(b) * time.Hour)
		if d := int(t.Sub(start) / day); d != dayIndex {
			dayIndex = d
			z = 0.6*z + 0.8*r.NormFloat64()
			factor = math.Exp(0.22 * z)
			if chance(r, 0.04) { // a big news day
				factor *= 1.8
			}
		}
		w := hourWeights[t.Hour()] * weekdayWeights[t.Weekday()] * factor
		if rest := end.Sub(t); rest < time.Hour {
			w *= float64(rest) / float64(time.Hour)
		}
		cum[b+1] = cum[b] + w
	}
	return &timeline{start: start, end: end, cum: cum, n: n}
}

// next returns the next timestamp, truncated to the millisecond.
func (tl *timeline) next(r *rand.Rand) time.Time {
	total := tl.cum[len(tl.cum)-1]
	x := (float64(tl.i) + r.Float64()) / float64(tl.n) * total
	tl.i++
	for tl.bucket < len(tl.cum)-2 && tl.cum[tl.bucket+1] <= x {
		tl.bucket++
	}
	b := tl.bucket
	frac := (x - tl.cum[b]) / (tl.cum[b+1] - tl.cum[b])
	bucketStart := tl.start.Add(time.Duration(b) * time.Hour)
	length := time.Hour
	if rest := tl.end.Sub(bucketStart); rest < length {
		length = rest
	}
	t := bucketStart.Add(time.Duration(frac * float64(length))).Truncate(time.Millisecond)
	if !t.Before(tl.end) {
		t = tl.end.Add(-time.Millisecond)
	}
	return t
}
