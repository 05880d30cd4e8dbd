package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/feedapi/feedapi/db/dbtest"
)

// decodeWithDecoder is decodeObject's member split as encoding/json's
// Decoder does it, the reference for FuzzDecodeObject.
func decodeWithDecoder(line []byte) (names []string, values []string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, _ := dec.Token(); tok != json.Delim('{') {
		return nil, nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, nil, false
		}
		names = append(names, tok.(string))
		values = append(values, string(value))
	}
	return names, values, true
}

// FuzzDecodeObject checks that decodeObject splits every valid JSON object
// into the members encoding/json finds, and refuses what is not one.
func FuzzDecodeObject(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { } `, `{"id":1}`, "{\t\"a\" :\n\"x\" , \"b\":[1,{\"c\":\"]}\"}],\"d\":null}\r",
		`{"raw":{"text":"a \"quoted\" \\ word","n":[1.5e3,-2,true,false]},"body":"caf\u00e9 $BTC"}`,
		`{"a\"b":"\u0000","c":"\ud800"}`, `[1,2]`, `"text"`, `12`, `{"a":1,"a":2}`, `{"emoji":"🚀 ETH"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		o, ferr := decodeObject(line)
		if !json.Valid(line) {
			if ferr == nil {
				t.Fatalf("%q: accepted, but it is not JSON", line)
			}
			return
		}
		names, values, ok := decodeWithDecoder(line)
		if ferr != nil {
			if ok && !bytes.Contains([]byte(ferr.Error()), []byte("duplicate field")) && ferr.field != "json" {
				t.Fatalf("%q: refused as %v", line, ferr)
			}
			return
		}
		if !ok {
			t.Fatalf("%q: accepted, but it is not an object", line)
		}
		if !slices.Equal(o.names, names) {
			t.Fatalf("%q: names %q, want %q", line, o.names, names)
		}
		for i, name := range names {
			if got := string(o.members[name]); got != values[i] {
				t.Fatalf("%q: member %q = %q, want %q", line, name, got, values[i])
			}
			if values[i][0] == '"' {
				var want string
				_ = json.Unmarshal([]byte(values[i]), &want)
				if got := unquote(o.members[name]); got != want {
					t.Fatalf("%q: member %q reads as %q, want %q", line, name, got, want)
				}
			}
		}
	})
}

// TestJSONBShapeIsWhatPostgreSQLWrites: the length jsonbShape computes for
// a raw payload is the length of the text PostgreSQL's jsonb writes for it,
// which the API serves: separators, escapes and numbers written out.
func TestJSONBShapeIsWhatPostgreSQLWrites(t *testing.T) {
	t.Parallel()
	bdb := dbtest.New(t)
	values := []string{
		`{}`, `{"a":[]}`, `{"a":{}}`, `{"a":1,"b":[1,2,3],"c":{"d":null,"e":true,"f":false}}`,
		`{"s":"caf\u00e9 \"q\" \\ \n\t\r\b\f \u0001\u001f \u2028 🚀"}`, `{"\n":"key with a newline"}`,
		`{"n":[0,-0,-0.0,0.000,0e5,1e2,1E+2,1.5e-3,-1.50,123.45e1,1.0e-1,100,-12345678901234567890.123,5e-20,7e30]}`,
		`{"big":1e1000}`, `{"dup":1,"dup":[1,2]}`, `{"deep":[[[[{"x":[{}]}]]]]}`,
	}
	for _, v := range values {
		obj := map[string]any{}
		dec := json.NewDecoder(strings.NewReader(v))
		dec.UseNumber()
		if err := dec.Decode(&obj); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		got, problem := jsonbShape(obj)
		if problem != "" {
			t.Errorf("%s: %s", v, problem)
			continue
		}
		var want int
		var text string
		if err := bdb.QueryRowContext(context.Background(), "SELECT octet_length(?::jsonb::text), ?::jsonb::text", v, v).Scan(&want, &text); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if got != want {
			t.Errorf("%s: jsonbShape gives %d bytes, PostgreSQL writes %d: %s", v, got, want, text)
		}
	}
}

// TestRawBounds: an import line's raw is refused, with its line, when it
// nests deeper than maxRawDepth or PostgreSQL would write it out longer
// than maxRawServed; just within both it is accepted.
func TestRawBounds(t *testing.T) {
	t.Parallel()
	nested := func(depth int) string {
		return `{"a":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`
	}
	tests := []struct {
		name, raw, problem string
	}{
		{"as deep as allowed", nested(maxRawDepth), ""},
		{"one level too deep", nested(maxRawDepth + 1), "raw: nested 65 levels deep, more than the 64 allowed"},
		{"nine thousand levels", nested(9000), "raw: nested 9000 levels deep, more than the 64 allowed"},
		{"numbers that write out long", `{"n":[` + strings.Repeat("1e100000,", 30) + `1]}`, "raw: is 3000100 bytes long as served"},
		{"a long payload of short numbers", `{"n":[` + strings.Repeat("0,", 400_000) + `0]}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, ferr := decodeObject([]byte(`{"raw":` + tc.raw + `}`))
			if ferr != nil {
				t.Fatal(ferr)
			}
			got := o.jsonObject("raw")
			err := o.err()
			switch {
			case tc.problem == "" && (err != nil || got == nil):
				t.Errorf("refused: %v", err)
			case tc.problem != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.problem)):
				t.Errorf("error %v, want it to start with %q", err, tc.problem)
			}
		})
	}
}
