package scalar

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

func TestUnmarshalInt64(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   any
		want int64
		ok   bool
	}{
		{"literal above Int", int64(2147483648), 2147483648, true},
		{"literal max", int64(math.MaxInt64), math.MaxInt64, true},
		{"int", 7, 7, true},
		{"int32", int32(-7), -7, true},
		{"variable number", json.Number("9007199254740993"), 9007199254740993, true},
		{"variable max", json.Number("9223372036854775807"), math.MaxInt64, true},
		{"variable min", json.Number("-9223372036854775808"), math.MinInt64, true},
		{"digit string", "2147483648", 2147483648, true},
		{"negative string", "-12", -12, true},
		{"number beyond 64 bits", json.Number("9223372036854775808"), 0, false},
		{"string beyond 64 bits", "99999999999999999999", 0, false},
		{"fraction", json.Number("1.5"), 0, false},
		{"integral fraction", json.Number("1.0"), 0, false},
		{"exponent", json.Number("1e3"), 0, false},
		{"plus sign", "+1", 0, false},
		{"spaces", " 1", 0, false},
		{"empty string", "", 0, false},
		{"minus alone", "-", 0, false},
		{"float", 1.0, 0, false},
		{"bool", true, 0, false},
		{"null", nil, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := UnmarshalInt64(tc.in)
			if tc.ok != (err == nil) {
				t.Fatalf("UnmarshalInt64(%#v): err %v, want ok=%v", tc.in, err, tc.ok)
			}
			if got != tc.want {
				t.Errorf("UnmarshalInt64(%#v) = %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}

// Int64 is written as a JSON number, exactly as Int was, so answers do not
// change; and as AppendInt64 writes it, which the plain objects use.
func TestMarshalInt64IsANumber(t *testing.T) {
	for _, i := range []int64{1, 2147483648, 9007199254740991, math.MaxInt64, math.MinInt64} {
		var buf bytes.Buffer
		MarshalInt64(i).MarshalGQL(&buf)
		var n json.Number
		if err := json.Unmarshal(buf.Bytes(), &n); err != nil {
			t.Fatalf("MarshalInt64(%d) wrote %q, not a JSON number: %v", i, buf.String(), err)
		}
		if got, err := n.Int64(); err != nil || got != i {
			t.Errorf("MarshalInt64(%d) wrote %s", i, n)
		}
		if a := AppendInt64(nil, i); !bytes.Equal(a, buf.Bytes()) {
			t.Errorf("AppendInt64(%d) = %s, MarshalInt64 wrote %s", i, a, buf.Bytes())
		}
	}
}
