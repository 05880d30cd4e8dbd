package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/feedapi/feedapi/graph/cursor"
	"github.com/feedapi/feedapi/rest/envelope"
)

// fuzzPaths are the paths FuzzQueryString sends query strings to: every
// route ({id} is replaced by the fuzzed id) and one unknown path.
var fuzzPaths = []string{
	"/v1/health",
	"/v1/openapi.json",
	"/v1/posts",
	"/v1/posts/{id}",
	"/v1/briefs",
	"/v1/briefs/{id}",
	"/v1/firehose",
	"/v1/sources",
	"/v1/etf-flows",
	"/v1/etf-flows/latest",
	"/graphql",
	"/v1/nope",
}

// fuzzQueries seed FuzzQueryString: good and bad values of every
// parameter, and query strings malformed in every way we could think of.
var fuzzQueries = []string{
	"",
	"limit=1",
	"limit=0",
	"limit=101",
	"limit=500",
	"limit=-1",
	"limit=1e2",
	"limit=9223372036854775808",
	"limit=1&limit=2",
	"cursor=" + cursor.Encode("posts", 1<<40),
	"cursor=" + cursor.Encode("firehose", 1<<40),
	"cursor=" + cursor.Encode("briefs", 1<<40),
	"cursor=AQAAAAAAAABwyV6tcvbuVA%0A",
	"cursor=garbage",
	"cursor=",
	"since=2026-01-01",
	"since=2026-01-01T00:00:00%2B01:00",
	"since=2026-01-01T00:00:00+01:00",
	"since=0000-01-01T00:00:00Z",
	"since=9999-12-31T23:59:59.999999999Z",
	"since=2026-02-30",
	"source=%00",
	"source=%ff%fe",
	"source=%25_%5C",
	"source=" + strings.Repeat("s", 300),
	"pane=iansintel&important=TRUE&include_summary=1",
	"pane=IANSINTEL",
	"important=yes",
	"include_body=0&include_raw=true",
	"asset=btc,ETH,sol,hype",
	"asset=doge",
	"asset=,",
	"from=2025-01-01&to=2024-01-01",
	"from=2025-02-30",
	"from=0000-01-01&to=0000-12-31",
	"since=0001-01-01T00:30:00%2B01:00",
	"since=9999-12-31T23:59:59-01:00",
	"since=0000-01-01T00:00:00%2B01:00",
	"since=2026-12-31T23:30:00-23:59",
	"since=2026-01-01T00:00:00%2B24:00",
	"from=0000-01-01&to=9999-12-31",
	"from=9999-12-31",
	"id=9223372036854775807",
	"to=99999-01-01",
	"query=%7B+health+%7B+status+%7D+%7D",
	"query=%7B+posts(source:%22%5Cu0000%22)+%7B+nodes+%7B+id+%7D+%7D+%7D",
	"query=%7B&variables=%7B",
	"%zz",
	"a=1&&b",
	";",
	"limit=1;x=2",
	"=",
	"&&&",
	"limit",
	"unknown=1",
	"LIMIT=1",
	"limit=%31",
	"\x00",
	"\xff",
}

// FuzzQueryString sends arbitrary query strings (and path ids) to every
// route with an internal key, through the whole handler over a seeded
// database. Whatever the input: no panic, no 5xx, no internal error
// logged, Content-Type application/json with charset, and a body that is
// the envelope with either data or error (the OpenAPI document and
// GraphQL responses have their own shapes).
func FuzzQueryString(f *testing.F) {
	for i := range fuzzPaths {
		for _, q := range fuzzQueries {
			f.Add(uint8(i), "1", q)
		}
	}
	for _, id := range []string{"0", "-1", "9223372036854775807", "9223372036854775808", "abc", "1.5", "%00", "", "1/2"} {
		f.Add(uint8(3), id, "")
		f.Add(uint8(5), id, "")
	}
	a := newAPI(f, func(c *Config) { c.Auth.RateLimit, c.Auth.IPRateLimit = 1<<30, 1<<30 })
	f.Fuzz(func(t *testing.T, route uint8, id, rawQuery string) {
		path := strings.ReplaceAll(fuzzPaths[int(route)%len(fuzzPaths)], "{id}", id)
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", rawQuery
		req.RequestURI = req.URL.RequestURI()
		req.Header.Set("Authorization", "Bearer "+a.intern)
		what := "GET " + path + "?" + rawQuery
		before := len(a.logs.String())
		w := httptest.NewRecorder()
		a.handler.ServeHTTP(w, req)

		if w.Code >= 500 {
			t.Fatalf("%s: status %d: %s", what, w.Code, w.Body)
		}
		if got := w.Header().Get("Content-Type"); got != envelope.ContentTypeJSON {
			t.Fatalf("%s: Content-Type %q", what, got)
		}
		if logs := a.logs.String()[before:]; strings.Contains(logs, "level=ERROR") {
			t.Fatalf("%s: logged an error: %s", what, logs)
		}
		body := w.Body.Bytes()
		for _, leak := range []string{"goroutine ", "runtime/debug", "SQLSTATE", "pgconn", "panic:"} {
			if bytes.Contains(body, []byte(leak)) && !strings.Contains(what, leak) {
				t.Fatalf("%s: body contains %q: %.300s", what, leak, body)
			}
		}
		switch {
		case path == "/v1/openapi.json" && w.Code == http.StatusOK:
			if !json.Valid(body) {
				t.Fatalf("%s: the OpenAPI document is not JSON", what)
			}
		case path == "/graphql" && w.Code != http.StatusMethodNotAllowed:
			var g struct {
				Errors []struct {
					Extensions map[string]any `json:"extensions"`
				} `json:"errors"`
			}
			if err := json.Unmarshal(body, &g); err != nil {
				t.Fatalf("%s: not a GraphQL response: %v: %.300s", what, err, body)
			}
			for _, e := range g.Errors {
				if code, _ := e.Extensions["code"].(string); code == "" || code == "internal" {
					t.Fatalf("%s: a GraphQL error with extensions.code %q: %.300s", what, code, body)
				}
			}
		default:
			var env map[string]json.RawMessage
			if err := json.Unmarshal(body, &env); err != nil {
				t.Fatalf("%s: body is not a JSON object: %v: %.300s", what, err, body)
			}
			_, data := env["data"]
			_, failed := env["error"]
			if data == failed || env["meta"] == nil {
				t.Fatalf("%s: %d, want data or error, and meta: %.300s", what, w.Code, body)
			}
			if failed != (w.Code >= 400) {
				t.Fatalf("%s: status %d with %s", what, w.Code, body)
			}
			if w.Code == http.StatusBadRequest {
				if msg := errorMessage(body); !namesParameter(msg, path, rawQuery) {
					t.Fatalf("%s: 400 %q names none of the request's parameters", what, msg)
				}
			}
		}
	})
}

func errorMessage(body []byte) string {
	var env struct {
		Error struct{ Message string } `json:"error"`
	}
	json.Unmarshal(body, &env) //nolint:errcheck // checked by the caller's envelope check
	return env.Error.Message
}

// namesParameter reports whether a 400's message names what the client
// wrote: one of the query string's parameters, the path id, or the query
// string as a whole.
func namesParameter(msg, path, rawQuery string) bool {
	if strings.Contains(msg, "query string") {
		return true
	}
	if strings.HasPrefix(msg, "id ") && (strings.HasPrefix(path, "/v1/posts/") || strings.HasPrefix(path, "/v1/briefs/")) {
		return true
	}
	values, err := url.ParseQuery(rawQuery)
	if err != nil {
		return false
	}
	for name := range values {
		if name != "" && strings.HasPrefix(msg, name+" ") ||
			strings.Contains(msg, "parameter "+strconv.Quote(name)) {
			return true
		}
	}
	return false
}
