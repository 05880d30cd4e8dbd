package openapi

import (
	"encoding/json"
	"sort"
	"strconv"
	"testing"
)

// Every timestamp the API serves has the shape patternDateTime; a schema of
// that shape also says format date-time, so that generated clients type it
// as a time (oapi-codegen: time.Time) and not as a string to parse by hand.
// A nullable timestamp is type [string, null] with the format, as
// firehose_oldest is, not a pattern alone in an anyOf branch.
func TestEveryTimestampHasTheDateTimeFormat(t *testing.T) {
	built, err := Build(testOptions)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(built, &doc); err != nil {
		t.Fatal(err)
	}
	var bad []string
	seen := 0
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["pattern"] == patternDateTime {
				seen++
				if v["format"] != "date-time" {
					bad = append(bad, path)
				}
			}
			for k, c := range v {
				walk(path+"/"+k, c)
			}
		case []any:
			for i, c := range v {
				walk(path+"/"+strconv.Itoa(i), c)
			}
		}
	}
	walk("", doc)
	sort.Strings(bad)
	if seen == 0 {
		t.Fatal("no schema of the timestamps' pattern: the walk found nothing to check")
	}
	for _, p := range bad {
		t.Errorf("%s: a timestamp without format date-time", p)
	}
}
