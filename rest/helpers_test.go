package rest

import (
	"log/slog"
	"testing"
)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestExtract(t *testing.T) {
	t.Parallel()
	t.Run("member", func(t *testing.T) {
		for _, tc := range []struct {
			in, key, want string
			ok            bool
		}{
			{`{"data":{"a":1}}`, "data", `{"a":1}`, true},
			{`{"data":[1,2]}`, "data", `[1,2]`, true},
			{`{"data":null}`, "data", `null`, true},
			{`{ "data" : [1] }`, "data", `[1]`, true}, // through the fallback
			{`{"other":1}`, "data", "", false},
			{`not json`, "data", "", false},
		} {
			got, err := member([]byte(tc.in), tc.key)
			if (err == nil) != tc.ok || string(got) != tc.want {
				t.Errorf("member(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
			}
		}
	})
	t.Run("splitPage", func(t *testing.T) {
		for _, tc := range []struct {
			in, items, cursor string
			more, ok          bool
		}{
			{`{"page":{"pageInfo":{"hasNextPage":true,"endCursor":"Ab-_"},"data":[{"x":"}{\"]["}]}}`, `[{"x":"}{\"]["}]`, `"Ab-_"`, true, true},
			{`{"page":{"pageInfo":{"hasNextPage":false,"endCursor":null},"data":[]}}`, `[]`, `null`, false, true},
			{`{"page":{"data":[1],"pageInfo":{"hasNextPage":true,"endCursor":"c"}}}`, `[1]`, `"c"`, true, true}, // fallback
			{`{"page":{"pageInfo":{"hasNextPage":true}}}`, ``, ``, false, false},
		} {
			items, pi, err := splitPage([]byte(tc.in))
			if (err == nil) != tc.ok {
				t.Errorf("splitPage(%s): err %v", tc.in, err)
				continue
			}
			if !tc.ok {
				continue
			}
			if string(items) != tc.items || string(pi.EndCursor) != tc.cursor || pi.HasNextPage != tc.more {
				t.Errorf("splitPage(%s) = %s, %+v", tc.in, items, pi)
			}
		}
	})
	t.Run("objectEnd", func(t *testing.T) {
		for in, want := range map[string]int{
			`{}`:                 2,
			`{"a":{"b":[1]}},x`:  15,
			`{"a":"}\"}"}x`:      12,
			`{"a":"\\"}x`:        10,
			`{"a":1`:             -1,
			`[1]`:                -1,
			``:                   -1,
			`{"a":"{{{{"}...}}}`: 12,
		} {
			if got := objectEnd([]byte(in)); got != want {
				t.Errorf("objectEnd(%s) = %d, want %d", in, got, want)
			}
		}
	})
}
