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

// BenchmarkAppendString writes a post-sized body: go test ./graph/scalar -bench AppendString
func BenchmarkAppendString(b *testing.B) {
	body := strings.Repeat("Bitcoin ETF inflows hit a record as \"institutions\" buy the dip.\n", 8)
	buf := make([]byte, 0, 1024)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		buf = AppendString(buf[:0], body)
	}
}
