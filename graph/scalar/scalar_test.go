package scalar

import (
	"testing"
	"time"
)

// TestUnmarshalDateTimeIsRFC3339 holds DateTime input to RFC 3339, which
// time.Parse exceeds: an offset of +24:00 is no offset at all there, yet
// time.Parse reads it as a whole day.
func TestUnmarshalDateTimeIsRFC3339(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // UTC, RFC 3339; "" for refused
	}{
		{"2026-01-02T15:04:05Z", "2026-01-02T15:04:05Z"},
		{"2026-01-02T15:04:05.123456789Z", "2026-01-02T15:04:05.123456789Z"},
		{"2026-01-02T15:04:05+23:59", "2026-01-01T15:05:05Z"},
		{"2026-01-02T15:04:05-00:00", "2026-01-02T15:04:05Z"},
		{"9999-12-31T23:59:59-01:00", "10000-01-01T00:59:59Z"},
		{"2026-01-02T15:04:05+24:00", ""},
		{"2026-01-02T15:04:05-23:60", ""},
		{"2026-01-02T15:04:05,5Z", ""},
		{"2026-01-02T15:04:05", ""},
		{"2026-01-02", ""},
	} {
		got, err := UnmarshalDateTime(tc.in)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("UnmarshalDateTime(%q) = %v, want an error", tc.in, got)
		case tc.want != "" && err != nil:
			t.Errorf("UnmarshalDateTime(%q): %v", tc.in, err)
		case tc.want != "" && got.Format(time.RFC3339Nano) != tc.want:
			t.Errorf("UnmarshalDateTime(%q) = %s, want %s", tc.in, got.Format(time.RFC3339Nano), tc.want)
		}
	}
}
