package db

import (
	"errors"
	"strings"
	"time"
)

// errNotRFC3339 is ParseTimestamp's error for what time.Parse accepts
// beyond RFC 3339.
var errNotRFC3339 = errors.New("not an RFC 3339 date-time: offsets run from -23:59 to +23:59 and a fraction follows a period")

// ParseTimestamp reads an RFC 3339 date-time with Z or an offset (upper-case
// T and Z), and refuses what time.Parse accepts beyond RFC 3339: a comma
// before the fraction, and offsets of 24 hours or 60 minutes, which
// time.Parse reads as such (+24:00 moves the instant by a whole day).
func ParseTimestamp(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	if strings.IndexByte(s, ',') >= 0 {
		return time.Time{}, errNotRFC3339
	}
	if s[len(s)-1] != 'Z' {
		off := s[len(s)-6:] // ±hh:mm, as time.Parse has checked
		if off[1:3] > "23" || off[4:6] > "59" {
			return time.Time{}, errNotRFC3339
		}
	}
	return t, nil
}
