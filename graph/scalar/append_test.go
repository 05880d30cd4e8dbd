package scalar

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/feedapi/feedapi/db"
)

func written(m graphql.Marshaler) string {
	var buf bytes.Buffer
	m.MarshalGQL(&buf)
	return buf.String()
}

var tricky = []string{
	"", "plain", `quote " and backslash \`, "tab\tcr\rlf\n", "\x00\x01\x1f\x7f",
	"日本語 ✓ 🚀", "invalid \xff\xfe utf-8", "\u2028\u2029", "</script>&", "end\\",
}

// TestAppendWritesWhatMarshalWrites holds every Append function to its
// marshaller, byte for byte: plain objects write with the one, gqlgen's
// path with the other, and a client must not see which.
func TestAppendWritesWhatMarshalWrites(t *testing.T) {
	at := time.Date(2026, 11, 21, 9, 8, 7, 654_321_000, time.FixedZone("X", 5*3600))
	type pair struct {
		name           string
		append, marshl string
	}
	var cases []pair
	for _, s := range tricky {
		cases = append(cases, pair{"String " + s, string(AppendString([]byte("x"), s))[1:], written(graphql.MarshalString(s))})
	}
	for _, i := range []int64{0, -1, 42, math.MaxInt64, math.MinInt64} {
		cases = append(cases,
			pair{"Int64", string(AppendInt64(nil, i)), written(graphql.MarshalInt64(i))},
			pair{"Int", string(AppendInt(nil, int(i))), written(graphql.MarshalInt(int(i)))})
	}
	for _, v := range []bool{true, false} {
		cases = append(cases, pair{"Boolean", string(AppendBoolean(nil, v)), written(graphql.MarshalBoolean(v))})
	}
	for _, tm := range []time.Time{at, {}, time.Unix(0, 0)} {
		cases = append(cases,
			pair{"DateTime", string(AppendDateTime(nil, tm)), written(MarshalDateTime(tm))},
			pair{"Date", string(AppendDate(nil, tm)), written(MarshalDate(tm))})
	}
	for _, m := range []db.Money{0, -5, 123456789, -4503599627370499} {
		cases = append(cases, pair{"Money", string(AppendMoney(nil, m)), written(MarshalMoney(m))})
	}
	for _, raw := range []json.RawMessage{nil, {}, json.RawMessage(`{"a":[1,"b"]}`)} {
		cases = append(cases, pair{"JSON", string(AppendJSON(nil, raw)), written(MarshalJSON(raw))})
	}
	for _, c := range cases {
		if c.append != c.marshl {
			t.Errorf("%s: Append wrote %q, Marshal wrote %q", c.name, c.append, c.marshl)
		}
	}
	if got := string(AppendDateTime(nil, at)); got != `"2026-11-21T04:08:07.654Z"` {
		t.Errorf("AppendDateTime = %s", got)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range tricky {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(AppendString(nil, s)), written(graphql.MarshalString(s)); got != want {
			t.Fatalf("AppendString(%q) = %q, graphql.MarshalString writes %q", s, got, want)
		}
	})
}

// BenchmarkAppendString writes post-sized bodies, one escaped every 60
// bytes and one plain, as most news text is: go test ./graph/scalar -bench AppendString
func BenchmarkAppendString(b *testing.B) {
	for _, bc := range []struct{ name, body string }{
		{"escapes", strings.Repeat("Bitcoin ETF inflows hit a record as \"institutions\" buy the dip.\n", 8)},
		{"plain", strings.Repeat("Bitcoin ETF inflows hit a record as institutions buy the dip, analysts say. ", 6)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			buf := make([]byte, 0, 1024)
			b.SetBytes(int64(len(bc.body)))
			for b.Loop() {
				buf = AppendString(buf[:0], bc.body)
			}
		})
	}
}

// BenchmarkAppendDateTime: go test ./graph/scalar -bench AppendDateTime
func BenchmarkAppendDateTime(b *testing.B) {
	at := time.Date(2026, 11, 24, 6, 30, 12, 345_678_901, time.UTC)
	buf := make([]byte, 0, 64)
	for b.Loop() {
		buf = AppendDateTime(buf[:0], at)
	}
}

// FuzzAppendDateTime: the field-by-field writing of AppendDateTime equals
// time.Format with DateTimeLayout, for any instant, in any zone, years
// outside 0000-9999 included.
func FuzzAppendDateTime(f *testing.F) {
	for _, sec := range []int64{0, -1, 1794785857, 253402300799, 253402300800, -62167219200, -62167219201} {
		f.Add(sec, int64(999_999_999), 0)
		f.Add(sec, int64(1_000_000), -3600*5)
	}
	f.Fuzz(func(t *testing.T, sec, nsec int64, offset int) {
		at := time.Unix(sec, nsec).In(time.FixedZone("z", offset%(18*3600)))
		want := `"` + at.UTC().Format(DateTimeLayout) + `"`
		if got := string(AppendDateTime(nil, at)); got != want {
			t.Fatalf("AppendDateTime(%v) = %s, want %s", at, got, want)
		}
	})
}
