package rest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/rest/contract"
)

func TestParameters(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.addPosts(fxPostID, 1, "fx")
	a.addBriefs(fxBriefID, 1)

	const (
		limit100   = "limit must be an integer from 1 to 100"
		limit500   = "limit must be an integer from 1 to 500"
		boolean    = "must be true or false (or 1 or 0)"
		since      = "since must be an RFC 3339 date-time with Z or an offset"
		panes      = "pane must be one of news, crypto, wire, blogs, twitter, iansintel"
		assets     = "asset must be a comma-separated list drawn from BTC, ETH, SOL, HYPE"
		cursorMsg  = "cursor"
		idMsg      = "id must be a positive integer"
		repeated   = "must be given at most once"
		unknownMsg = "unknown parameter"
	)
	for _, tc := range []struct {
		name    string
		path    string
		status  int
		message string // substring of error.message
	}{
		// limit
		{"limit default", "/v1/posts", 200, ""},
		{"limit lower bound", "/v1/posts?limit=1", 200, ""},
		{"limit upper bound", "/v1/posts?limit=100", 200, ""},
		{"limit leading zero", "/v1/posts?limit=007", 200, ""},
		{"limit zero", "/v1/posts?limit=0", 400, limit100},
		{"limit over", "/v1/posts?limit=101", 400, limit100},
		{"limit negative", "/v1/posts?limit=-1", 400, limit100},
		{"limit plus sign", "/v1/posts?limit=%2B5", 400, limit100},
		{"limit not a number", "/v1/posts?limit=ten", 400, limit100},
		{"limit fraction", "/v1/posts?limit=1.5", 400, limit100},
		{"limit empty", "/v1/posts?limit=", 400, limit100},
		{"limit huge", "/v1/posts?limit=99999999999999999999", 400, limit100},
		{"limit briefs over", "/v1/briefs?limit=101", 400, limit100},
		{"limit firehose over", "/v1/firehose?limit=101", 400, limit100},
		{"limit etf upper bound", "/v1/etf-flows?limit=500", 200, ""},
		{"limit etf over", "/v1/etf-flows?limit=501", 400, limit500},
		{"limit etf zero", "/v1/etf-flows?limit=0", 400, limit500},
		// booleans
		{"bool true", "/v1/posts?include_body=true", 200, ""},
		{"bool TRUE", "/v1/posts?include_body=TRUE", 200, ""},
		{"bool 1", "/v1/posts?include_raw=1", 200, ""},
		{"bool False", "/v1/posts?include_raw=False", 200, ""},
		{"bool 0", "/v1/firehose?important=0", 200, ""},
		{"bool yes", "/v1/posts?include_body=yes", 400, "include_body " + boolean},
		{"bool empty", "/v1/posts?include_raw=", 400, "include_raw " + boolean},
		{"bool 2", "/v1/firehose?important=2", 400, "important " + boolean},
		{"bool summary", "/v1/firehose?include_summary=on", 400, "include_summary " + boolean},
		{"bool single post", "/v1/posts/1?include_raw=t", 400, "include_raw " + boolean},
		// since
		{"since Z", "/v1/posts?since=2026-01-02T15:04:05Z", 200, ""},
		{"since millis", "/v1/posts?since=2026-01-02T15:04:05.123Z", 200, ""},
		{"since offset", "/v1/posts?since=2026-01-02T15:04:05%2B02:00", 200, ""},
		{"since negative offset", "/v1/firehose?since=2026-01-02T15:04:05-05:00", 200, ""},
		{"since date", "/v1/firehose?since=2026-01-02", 200, ""},
		{"since unencoded plus", "/v1/posts?since=2026-01-02T15:04:05+02:00", 400, since},
		{"since no zone", "/v1/posts?since=2026-01-02T15:04:05", 400, since},
		{"since not a date", "/v1/posts?since=yesterday", 400, since},
		{"since impossible date", "/v1/posts?since=2026-02-30", 400, since},
		{"since unix time", "/v1/firehose?since=1767366245", 400, since},
		{"since empty", "/v1/posts?since=", 400, since},
		// RFC 3339 date-times whose UTC form leaves the years 0000-9999
		{"since year 10000 in UTC", "/v1/posts?since=9999-12-31T23:59:59-01:00", 200, ""},
		{"since year -1 in UTC", "/v1/firehose?since=0000-01-01T00:00:00%2B01:00", 200, ""},
		{"since hour 24", "/v1/posts?since=2026-01-02T24:00:00Z", 400, since},
		{"since offset hour 24", "/v1/posts?since=2026-01-02T10:00:00%2B24:00", 400, since},
		{"since comma fraction", "/v1/posts?since=2026-01-02T10:00:00,5Z", 400, since},
		// cursor
		{"cursor garbage", "/v1/posts?cursor=abc", 400, cursorMsg},
		{"cursor empty", "/v1/posts?cursor=", 400, cursorMsg},
		{"cursor briefs garbage", "/v1/briefs?cursor=%21%21", 400, cursorMsg},
		{"cursor firehose garbage", "/v1/firehose?cursor=AAAAAAAAAAAAAAAAAAAAAAA", 400, cursorMsg},
		// source
		{"source", "/v1/posts?source=fx", 200, ""},
		{"source empty", "/v1/posts?source=", 400, "source must be a non-empty text"},
		{"source invalid UTF-8", "/v1/firehose?source=%FF", 400, "source must be"},
		{"source NUL", "/v1/firehose?source=a%00b", 400, "source must be"},
		{"source too long", "/v1/posts?source=" + strings.Repeat("x", 257), 400, "at most 256 bytes"},
		// pane
		{"pane", "/v1/firehose?pane=iansintel", 200, ""},
		{"pane unknown", "/v1/firehose?pane=tv", 400, panes},
		{"pane wrong case", "/v1/firehose?pane=News", 400, panes},
		{"pane empty", "/v1/firehose?pane=", 400, panes},
		// asset
		{"asset one", "/v1/etf-flows?asset=BTC", 200, ""},
		{"asset list any case", "/v1/etf-flows?asset=btc,Eth,SOL,hype", 200, ""},
		{"asset with spaces", "/v1/etf-flows?asset=BTC,%20ETH", 200, ""},
		{"asset latest", "/v1/etf-flows/latest?asset=sol", 200, ""},
		{"asset unknown", "/v1/etf-flows?asset=DOGE", 400, assets},
		{"asset one unknown in list", "/v1/etf-flows?asset=BTC,DOGE", 400, assets},
		{"asset empty item", "/v1/etf-flows?asset=BTC,,ETH", 400, assets},
		{"asset empty", "/v1/etf-flows?asset=", 400, assets},
		{"asset latest unknown", "/v1/etf-flows/latest?asset=XRP", 400, assets},
		// from / to
		{"from to", "/v1/etf-flows?from=2025-01-01&to=2025-12-31", 200, ""},
		{"from equals to", "/v1/etf-flows?from=2025-01-01&to=2025-01-01", 200, ""},
		{"from after to", "/v1/etf-flows?from=2025-02-01&to=2025-01-31", 400, "from must not be after to"},
		{"from impossible date", "/v1/etf-flows?from=2025-02-29", 400, "from must be a calendar date YYYY-MM-DD"},
		{"to impossible date", "/v1/etf-flows?to=2025-13-01", 400, "to must be a calendar date YYYY-MM-DD"},
		{"to date-time", "/v1/etf-flows?to=2025-01-01T00:00:00Z", 400, "to must be a calendar date"},
		{"from short", "/v1/etf-flows?from=2025-1-1", 400, "from must be a calendar date"},
		{"leap day", "/v1/etf-flows?from=2024-02-29", 200, ""},
		{"from and to at the calendar's edges", "/v1/etf-flows?from=0000-01-01&to=9999-12-31", 200, ""},
		{"to with five digits", "/v1/etf-flows?to=10000-01-01", 400, "to must be a calendar date"},
		// repeated, unknown and malformed
		{"repeated limit", "/v1/posts?limit=10&limit=20", 400, "limit " + repeated},
		{"repeated identical", "/v1/firehose?pane=news&pane=news", 400, "pane " + repeated},
		{"repeated asset", "/v1/etf-flows?asset=BTC&asset=ETH", 400, "asset " + repeated},
		{"unknown", "/v1/posts?limt=10", 400, unknownMsg + ` "limt": allowed are limit, cursor, source, since, coins, q, since_id, after, include_body, include_raw`},
		{"unknown on briefs", "/v1/briefs?source=x", 400, unknownMsg + ` "source"`},
		{"include_body on one post", "/v1/posts/1?include_body=false", 400, unknownMsg + ` "include_body"`},
		{"unknown on brief", "/v1/briefs/1?x=1", 400, "takes no query parameters"},
		{"unknown on sources", "/v1/sources?etf=1", 400, "takes no query parameters"},
		{"unknown on health", "/v1/health?verbose=1", 400, "takes no query parameters"},
		{"unknown on openapi", "/v1/openapi.json?format=yaml", 400, "takes no query parameters"},
		{"parameter names are case-sensitive", "/v1/posts?Limit=5", 400, unknownMsg},
		{"malformed escape", "/v1/posts?limit=%zz", 400, "query string is malformed"},
		{"semicolon", "/v1/posts?limit=5;source=x", 400, "query string is malformed"},
		// path ids
		{"id", missingBrief, 404, "brief 8999999999 not found"},
		{"id leading zeros", "/v1/posts/0008999999999999", 404, "post 8999999999999 not found"},
		{"id max int64", "/v1/posts/9223372036854775807", 404, "not found"},
		{"id over int64", "/v1/posts/9223372036854775808", 400, idMsg},
		{"id zero", "/v1/posts/0", 400, idMsg},
		{"id negative", "/v1/posts/-1", 400, idMsg},
		{"id not a number", "/v1/posts/abc", 400, idMsg},
		{"id fraction", "/v1/briefs/1.0", 400, idMsg},
		{"id with sign", "/v1/briefs/%2B1", 400, idMsg},
		{"id missing", "/v1/posts/", 404, ""},
		{"id missing brief", "/v1/briefs/", 404, ""},
		// order: parameters (400) before the lookup (404)
		{"bad parameter on a missing post", "/v1/posts/999999999?include_raw=maybe", 400, "include_raw"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := a.get(t, tc.path, a.free)
			r.wantStatus(t, tc.status)
			if tc.status < 400 {
				return
			}
			wantCode := map[int]string{400: "bad_request", 404: "not_found"}[tc.status]
			if r.env.Error.Code != wantCode {
				t.Errorf("code %q, want %q", r.env.Error.Code, wantCode)
			}
			if !strings.Contains(r.env.Error.Message, tc.message) {
				t.Errorf("message %q, want it to contain %q", r.env.Error.Message, tc.message)
			}
		})
	}
}

func TestParameterChecksAreDeterministic(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	// Several problems at once: the first unknown parameter in alphabetical
	// order is reported, every time.
	for range 5 {
		r := a.get(t, "/v1/posts?zeta=1&alpha=2&limit=0", a.free)
		r.wantStatus(t, http.StatusBadRequest)
		if want := `unknown parameter "alpha"`; !strings.Contains(r.env.Error.Message, want) {
			t.Fatalf("message %q, want it to contain %q", r.env.Error.Message, want)
		}
	}
	// Value problems are reported in the endpoint's parameter order.
	r := a.get(t, "/v1/posts?include_raw=x&limit=0", a.free)
	if want := "limit must be"; !strings.Contains(r.env.Error.Message, want) {
		t.Errorf("message %q, want it to contain %q", r.env.Error.Message, want)
	}
}

// TestQueryErrorsNameTheQueryParameter: a bad_request of an endpoint's
// query that names a GraphQL variable is shown as the error of the query
// parameter that set it.
func TestQueryErrorsNameTheQueryParameter(t *testing.T) {
	t.Parallel()
	ep := endpoint{Endpoint: contract.Endpoint{Params: []contract.Param{contract.PageLimit(), contract.Cursor(),
		contract.Bool("include_raw", "includeRaw", false, false, "IncludeRaw", "")}}}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"variable first is limit", apperr.Invalid("first", "first must be an integer from 1 to 100"), "limit must be an integer from 1 to 100"},
		{"variable includeRaw is include_raw", apperr.Invalid("includeRaw", "variable $includeRaw: …"), "include_raw must be true or false"},
		{"a parameter's own name stays", apperr.Invalid("cursor", "cursor is invalid or was issued by another endpoint"), "cursor is invalid"},
		{"not found stays", apperr.Missing("post", 7), "post 7 not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := apperr.As(ep.restParam(tc.err))
			if got == nil || !strings.HasPrefix(got.Message, tc.want) {
				t.Errorf("restParam(%v) = %v, want a message starting %q", tc.err, got, tc.want)
			}
		})
	}
}
