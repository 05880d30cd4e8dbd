package envelope

import (
	"bytes"
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/feedapi/feedapi/graph/apperr"
)

func TestStatusTable(t *testing.T) {
	t.Parallel()
	for code, want := range map[apperr.Code]int{
		apperr.BadRequest:       400,
		apperr.Unauthorized:     401,
		apperr.QuotaExceeded:    402,
		apperr.ForbiddenTier:    403,
		apperr.NotFound:         404,
		apperr.MethodNotAllowed: 405,
		apperr.RateLimited:      429,
		apperr.Internal:         500,
	} {
		if got, ok := statusOf(code); got != want || !ok {
			t.Errorf("statusOf(%s) = %d, %v; want %d", code, got, ok, want)
		}
		if got := PublicCode(code); got != (code != apperr.Internal) {
			t.Errorf("PublicCode(%s) = %v", code, got)
		}
	}
	if got, ok := statusOf("teapot"); got != 500 || ok {
		t.Errorf("statusOf(unknown) = %d, %v; want 500, false", got, ok)
	}
}

func TestErrorEnvelopeShowsOnlyDomainErrors(t *testing.T) {
	t.Parallel()
	e := New(slog.New(slog.DiscardHandler))
	for _, tc := range []struct {
		err         error
		status      int
		code, msg   string
		wantHeaders map[string]string
	}{
		{apperr.Invalid("limit", "limit must be an integer from 1 to 100"), 400, "bad_request", "limit must be an integer from 1 to 100", nil},
		{apperr.New(apperr.QuotaExceeded, "quota"), 402, "quota_exceeded", "quota", nil},
		{apperr.New(apperr.Unauthorized, "no"), 401, "unauthorized", "no", map[string]string{"WWW-Authenticate": `Bearer realm="feedapi"`}},
		{apperr.New(apperr.RateLimited, "slow down"), 429, "rate_limited", "slow down", map[string]string{"Retry-After": "60"}},
		{apperr.New(apperr.Internal, "SELECT * FROM secrets"), 500, "internal", internalMessage, nil},
		{apperr.New("teapot", "short and stout"), 500, "internal", internalMessage, nil},
		{errWrapped{}, 500, "internal", internalMessage, nil},
	} {
		w := httptest.NewRecorder()
		r, _ := http.NewRequest(http.MethodGet, "/v1/posts", nil)
		e.Error(w, r, tc.err)
		if w.Code != tc.status {
			t.Errorf("%v: status %d, want %d", tc.err, w.Code, tc.status)
		}
		var env struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
			t.Fatalf("%v: %v", tc.err, err)
		}
		if env.Error.Code != tc.code || env.Error.Message != tc.msg {
			t.Errorf("%v: error %+v, want %s %q", tc.err, env.Error, tc.code, tc.msg)
		}
		for h, want := range tc.wantHeaders {
			if got := w.Header().Get(h); got != want {
				t.Errorf("%v: %s = %q, want %q", tc.err, h, got, want)
			}
		}
	}
}

type errWrapped struct{}

func (errWrapped) Error() string { return "dial tcp 10.0.0.1:5432: refused" }

func TestAppendJSONString(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", `"quoted" \ back`, "tab\tnew\nline\r", "ctl\x00\x01\x1f", "ünïcødé ✓ 🚀", "<&>", "bad \xff utf8", "\u2028"} {
		var buf bytes.Buffer
		AppendJSONString(&buf, s)
		var got string
		if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
			t.Errorf("%q: %s is not a JSON string: %v", s, buf.Bytes(), err)
			continue
		}
		if want := strings.ToValidUTF8(s, "\ufffd"); got != want {
			t.Errorf("%q: decoded %q", s, got)
		}
	}
}

func TestRequestIDFormat(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	a, b := NewRequestID(now), NewRequestID(now.Add(time.Millisecond))
	if len(a) != 32 || strings.Trim(a, "0123456789abcdef") != "" {
		t.Errorf("request id %q, want 32 lower-case hex digits", a)
	}
	if a == b || a[:12] >= b[:12] {
		t.Errorf("ids %s, %s: want distinct and ordered by time", a, b)
	}
	if c, d := NewRequestID(now), NewRequestID(now); c == d {
		t.Errorf("two ids of the same millisecond are equal")
	}
}

func TestAcceptsGzip(t *testing.T) {
	t.Parallel()
	for header, want := range map[string]bool{
		"":                    false,
		"gzip":                true,
		"GZip":                true,
		"x-gzip":              true,
		"deflate, gzip;q=0.1": true,
		"gzip;q=0":            false,
		"gzip; q=0.000":       false,
		"*":                   true,
		"*;q=0":               false,
		"*, gzip;q=0":         false,
		"gzip;q=0, *":         false,
		"identity":            false,
		"br, deflate":         false,
		"gzip;q=bogus":        true,
	} {
		if got := acceptsGzip([]string{header}); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", header, got, want)
		}
	}
	if !acceptsGzip([]string{"br", "gzip"}) {
		t.Errorf("gzip on a second Accept-Encoding line was missed")
	}
}

func TestEtagMatches(t *testing.T) {
	t.Parallel()
	const tag = "abc123"
	for header, want := range map[string]bool{
		`"abc123"`:            true,
		`W/"abc123"`:          true,
		`"abc123-gz"`:         true,
		`"x", "abc123"`:       true,
		`"x","abc123-gz"`:     true,
		`*`:                   true,
		`"abc12"`:             false,
		`abc123`:              false,
		`"abc123-gzip"`:       false,
		`""`:                  false,
		`"x", W/"y"`:          false,
		`"abc123`:             false,
		`  "abc123"  `:        true,
		`"-gz"`:               false,
		`"abc123-gz-gz"`:      false,
		`"ABC123"`:            false,
		`W/"x", "ABC", *`:     true,
		`"abc123" , "zzz"`:    true,
		`"a,b", "abc123"`:     true,
		`"abc123-gz" "extra"`: false,
	} {
		if got := etagMatches([]string{header}, tag); got != want {
			t.Errorf("etagMatches(%s) = %v, want %v", header, got, want)
		}
	}
}

// TestCanceledRequestsAreNotLoggedAsErrors: whatever error the work of a
// request whose client went away ends with (context.Canceled, or the
// driver's "bad connection" when the connection's reset ping was
// interrupted) is no server error; a server-side timeout is one.
func TestCanceledRequestsAreNotLoggedAsErrors(t *testing.T) {
	t.Parallel()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	timedOut, cancel2 := context.WithTimeout(context.Background(), 0)
	defer cancel2()
	for _, tt := range []struct {
		name      string
		ctx       context.Context
		err       error
		wantError bool
	}{
		{"client left, context.Canceled", canceled, fmt.Errorf("query posts: %w", context.Canceled), false},
		{"client left, bad connection", canceled, fmt.Errorf("list posts: %w", driver.ErrBadConn), false},
		{"server timeout", timedOut, fmt.Errorf("query posts: %w", context.DeadlineExceeded), true},
		{"bad connection, client still there", context.Background(), fmt.Errorf("list posts: %w", driver.ErrBadConn), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			e := New(slog.New(slog.NewTextHandler(&logs, nil)))
			r := httptest.NewRequest(http.MethodGet, "/v1/posts", nil).WithContext(tt.ctx)
			e.Error(httptest.NewRecorder(), r, tt.err)
			if got := strings.Contains(logs.String(), "level=ERROR"); got != tt.wantError {
				t.Errorf("logged as an error: %v, want %v:\n%s", got, tt.wantError, logs.String())
			}
		})
	}
}
