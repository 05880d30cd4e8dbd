package graph_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/cursor"
	"github.com/feedapi/feedapi/graph/keys"
)

func TestPageArgumentsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	briefs := e.addBriefs(fxBriefID, 2, fxMonday, 2)
	postsCursor := cursor.Encode("posts", fxPostID+1)
	raw, _ := base64.RawURLEncoding.DecodeString(postsCursor)
	raw[len(raw)-1] ^= 1
	tampered := base64.RawURLEncoding.EncodeToString(raw)
	raw, _ = base64.RawURLEncoding.DecodeString(postsCursor)
	raw[3] ^= 0x40
	tamperedID := base64.RawURLEncoding.EncodeToString(raw)
	const badCursor = "cursor is invalid or was issued by another endpoint"
	tests := []struct {
		name, query, param, message string
	}{
		{"first zero", `{ posts(first: 0) { nodes { id } } }`, "first", "first must be an integer from 1 to 100"},
		{"first above the cap", `{ firehose(first: 101) { nodes { id } } }`, "first", "first must be an integer from 1 to 100"},
		{"last above the cap", `{ briefs(last: 1000) { nodes { id } } }`, "last", "last must be an integer from 1 to 100"},
		{"negative last", `{ briefs(last: -1) { nodes { id } } }`, "last", "last must be an integer from 1 to 100"},
		{"first and last", `{ posts(first: 5, last: 5) { nodes { id } } }`, "last", ""},
		{"after with last", fmt.Sprintf(`{ posts(last: 5, after: %q) { nodes { id } } }`, postsCursor), "after", ""},
		{"before with first", fmt.Sprintf(`{ posts(first: 5, before: %q) { nodes { id } } }`, postsCursor), "before", ""},
		{"garbage cursor", `{ posts(after: "not a cursor!") { nodes { id } } }`, "cursor", badCursor},
		{"empty cursor", `{ posts(after: "") { nodes { id } } }`, "cursor", badCursor},
		{"tampered check byte", fmt.Sprintf(`{ posts(after: %q) { nodes { id } } }`, tampered), "cursor", badCursor},
		{"tampered id byte", fmt.Sprintf(`{ posts(after: %q) { nodes { id } } }`, tamperedID), "cursor", badCursor},
		{"posts cursor on the firehose", fmt.Sprintf(`{ firehose(after: %q) { nodes { id } } }`, postsCursor), "cursor", badCursor},
		{"posts cursor on briefs", fmt.Sprintf(`{ briefs(before: %q) { nodes { id } } }`, postsCursor), "cursor", badCursor},
		{"posts cursor on a brief's posts", fmt.Sprintf(`{ brief(id: %d) { posts(after: %q) { nodes { id } } } }`, briefs[0].ID, postsCursor), "cursor", badCursor},
		{"one brief's cursor on another brief", fmt.Sprintf(`{ brief(id: %d) { posts(after: %q) { nodes { id } } } }`,
			briefs[0].ID, cursor.Encode(fmt.Sprintf("brief:%d:posts", briefs[1].ID), fxPostID+1)), "cursor", badCursor},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := e.with(t).do(db.TierInternal, tt.query, nil)
			if len(r.Errors) != 1 {
				t.Fatalf("errors = %+v, want one", r.Errors)
			}
			got := r.Errors[0]
			if got.Extensions.Code != "bad_request" || got.Extensions.Param != tt.param {
				t.Errorf("extensions = %+v, want bad_request for %s", got.Extensions, tt.param)
			}
			if tt.message != "" && got.Message != tt.message {
				t.Errorf("message = %q, want %q", got.Message, tt.message)
			}
		})
	}

	t.Run("a cursor from the REST-shared posts connection works in GraphQL", func(t *testing.T) {
		e.addPosts(fxPostID, 3, "fx-shared", fxMonday)
		var out struct{ Posts connPage }
		e.with(t).query(`query($c: String) { posts(source: "fx-shared", after: $c) { nodes { id } } }`,
			map[string]any{"c": cursor.Encode("posts", fxPostID+3)}, &out)
		if got := out.Posts.ids(); len(got) != 2 || got[0] != fxPostID+2 {
			t.Errorf("ids = %v, want the two older posts", got)
		}
	})
}

func TestPageInfoFlags(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addPosts(fxPostID, 5, "fx-info", fxMonday)
	c := func(id int64) string { return cursor.Encode("posts", fxPostID+id) }
	tests := []struct {
		name           string
		args           string
		wantIDs        string
		hasPrev, hasNx bool
	}{
		{"first page", `first: 2`, "5 4", false, true},
		{"middle page forward", fmt.Sprintf(`first: 2, after: %q`, c(4)), "3 2", true, true},
		{"last page forward", fmt.Sprintf(`first: 2, after: %q`, c(2)), "1", true, false},
		{"exact fit forward", fmt.Sprintf(`first: 1, after: %q`, c(2)), "1", true, false},
		{"oldest page backward", `last: 2`, "2 1", true, false},
		{"middle page backward", fmt.Sprintf(`last: 2, before: %q`, c(2)), "4 3", true, true},
		{"newest page backward", fmt.Sprintf(`last: 2, before: %q`, c(4)), "5", false, true},
		{"before alone pages backward by 50", fmt.Sprintf(`before: %q`, c(3)), "5 4", false, true},
		{"default page", ``, "5 4 3 2 1", false, false},
		{"empty page", fmt.Sprintf(`first: 3, after: %q`, c(1)), "", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out struct{ Posts connPage }
			args := strings.TrimPrefix(tt.args+`, source: "fx-info"`, ", ")
			e.with(t).query(fmt.Sprintf(`{ posts(%s) { nodes { id } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`, args), nil, &out)
			var got []string
			for _, id := range out.Posts.ids() {
				got = append(got, fmt.Sprint(id-fxPostID))
			}
			if g := strings.Join(got, " "); g != tt.wantIDs {
				t.Errorf("ids = %q, want %q", g, tt.wantIDs)
			}
			pi := out.Posts.PageInfo
			if pi.HasPreviousPage != tt.hasPrev || pi.HasNextPage != tt.hasNx {
				t.Errorf("hasPreviousPage, hasNextPage = %v, %v; want %v, %v", pi.HasPreviousPage, pi.HasNextPage, tt.hasPrev, tt.hasNx)
			}
			if (pi.StartCursor == nil) != (tt.wantIDs == "") || (pi.EndCursor == nil) != (tt.wantIDs == "") {
				t.Errorf("cursors = %v, %v; want null exactly on an empty page", pi.StartCursor, pi.EndCursor)
			}
		})
	}
}

func TestErrorCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		opts     []option
		setup    func(e *env)
		tier     db.Tier
		query    string
		wantCode string
		wantMsg  string // substring; empty: any
		wantLog  string // substring of the log; empty: nothing logged
	}{
		{name: "parse error", query: `{ posts(first: 1 { id }`, wantCode: "bad_request"},
		{name: "unknown field", query: `{ posts { nodes { nope } } }`, wantCode: "bad_request", wantMsg: `Cannot query field "nope"`},
		{name: "unknown argument", query: `{ posts(limit: 5) { nodes { id } } }`, wantCode: "bad_request"},
		{name: "bad enum", query: `{ firehose(pane: radio) { nodes { id } } }`, wantCode: "bad_request"},
		{name: "bad DateTime", query: `{ posts(since: "yesterday") { nodes { id } } }`, wantCode: "bad_request", wantMsg: "RFC 3339"},
		{name: "bad variable type", query: `query($n: Int) { posts(first: $n) { nodes { id } } }`, wantCode: "bad_request"},
		{name: "not found", query: `{ post(id: 8999999999999) { id } }`, wantCode: "not_found", wantMsg: "post 8999999999999 not found"},
		{name: "introspection as free", tier: db.TierFree, query: `{ __schema { queryType { name } } }`, wantCode: "forbidden_tier"},
		{name: "database failure is internal and logged", setup: func(e *env) { e.exec("DROP TABLE posts") },
			query: `{ posts { nodes { id } } }`, wantCode: "internal", wantMsg: "internal error", wantLog: "posts"},
		{name: "panic is recovered as internal and logged",
			// A store without a database panics on its first query.
			opts:  []option{func(c *graph.Config) { c.Store = db.NewStore(nil) }},
			query: `{ posts { nodes { id } } }`, wantCode: "internal", wantMsg: "internal error", wantLog: "panic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tt.opts...)
			if tt.setup != nil {
				tt.setup(e)
			}
			tier := tt.tier
			if tier == "" {
				tier = db.TierInternal
			}
			vars := map[string]any{}
			if strings.Contains(tt.query, "$n") {
				vars["n"] = "five"
			}
			r := e.do(tier, tt.query, vars)
			if len(r.Errors) == 0 {
				t.Fatalf("no errors; data %s", r.Data)
			}
			for _, got := range r.Errors {
				if got.Extensions.Code != tt.wantCode {
					t.Errorf("code = %q (%s), want %q", got.Extensions.Code, got.Message, tt.wantCode)
				}
				if !strings.Contains(got.Message, tt.wantMsg) {
					t.Errorf("message = %q, want it to contain %q", got.Message, tt.wantMsg)
				}
				if tt.wantCode == "internal" && got.Message != "internal error" {
					t.Errorf("internal message %q leaks details", got.Message)
				}
			}
			logs := e.logs.String()
			if tt.wantLog == "" && logs != "" {
				t.Errorf("logged %q, want nothing", logs)
			}
			if tt.wantLog != "" && (!strings.Contains(logs, tt.wantLog) || !strings.Contains(logs, "path=")) {
				t.Errorf("log %q, want it to contain %q and the path", logs, tt.wantLog)
			}
		})
	}
}

// cancelHook cancels the request, with cause, when the store sends its
// first statement, as a client leaving or the request timeout would while
// the operation runs.
type cancelHook struct {
	once   *sync.Once
	cancel context.CancelCauseFunc
	cause  error
}

func (h cancelHook) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	h.once.Do(func() { h.cancel(h.cause) })
	return ctx
}
func (cancelHook) AfterQuery(context.Context, *bun.QueryEvent) {}

func TestInternalErrorsLoggedOncePerRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Three aliases, each of which fails once the request's context ends.
	const query = `query Dash { a: posts(first: 1) { nodes { id } } b: firehose(first: 1) { nodes { id } } c: briefs(first: 1) { nodes { id } } }`
	tests := []struct {
		name      string
		cause     error
		wantError bool // one ERROR line naming the request, else none
	}{
		{"the request timeout is an internal error, logged once", context.DeadlineExceeded, true},
		{"a client that went away is no internal error", context.Canceled, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			h := graph.NewHandler(graph.Config{
				Store:      db.NewStore(e.bdb.WithQueryHook(cancelHook{once: new(sync.Once), cancel: cancel, cause: tt.cause})),
				ETFEnabled: true,
				Logger:     slog.New(slog.NewTextHandler(&lockedWriter{w: &logs}, nil)),
			})
			body, _ := json.Marshal(map[string]any{"query": query})
			req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			ctx = keys.WithPrincipal(graph.WithRequestID(ctx, "req-0042"), keys.Principal{KeyID: 1, Tier: db.TierInternal})
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req.WithContext(ctx))

			var r response
			if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil {
				t.Fatalf("decode %q: %v", w.Body, err)
			}
			if len(r.Errors) != 3 {
				t.Errorf("errors = %+v, want one per alias", r.Errors)
			}
			lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
			if !tt.wantError {
				if strings.Contains(logs.String(), "level=ERROR") {
					t.Errorf("logged an error for a client that went away:\n%s", logs.String())
				}
				return
			}
			if len(lines) != 1 {
				t.Fatalf("logged %d lines, want 1:\n%s", len(lines), logs.String())
			}
			for _, want := range []string{"level=ERROR", "request_id=req-0042", "operation=Dash", "errors=3", "a", "b", "c", "context canceled"} {
				if !strings.Contains(lines[0], want) {
					t.Errorf("log line %q lacks %q", lines[0], want)
				}
			}
		})
	}
}
