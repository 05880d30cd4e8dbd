package importer

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
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
