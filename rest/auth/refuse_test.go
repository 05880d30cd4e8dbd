package auth

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/rest/envelope"
	"github.com/feedapi/feedapi/rest/ratelimit"
)

// noKeys knows no key: every authentication fails.
type noKeys struct{}

func (noKeys) Authenticate(context.Context, string) (keys.Principal, error) {
	return keys.Principal{}, apperr.New(apperr.Unauthorized, "unknown key")
}

// lockedBuffer is a log written by the server's goroutines and read by the
// test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// guarded serves one keyed route, /v1/posts, behind g's checks and early
// refusals, with local rate counters; its log is logs.
type guarded struct {
	g    *Guard
	srv  *httptest.Server
	logs *lockedBuffer
}

func newGuarded(t *testing.T, cfg Config) *guarded {
	t.Helper()
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg.Keys = noKeys{}
	g, err := New(cfg, Deps{Rates: ratelimit.New(nil, "test", nil, log, nil), Envelope: envelope.New(log), Logger: log,
		HeaderTooLarge: func(*http.Request) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	mux := chi.NewRouter()
	mux.With(g.Authenticate, g.Keyed("free")).Get("/v1/posts", func(w http.ResponseWriter, r *http.Request) {})
	srv := httptest.NewServer(g.Refusals(mux, map[string]bool{"/v1/posts": true}))
	t.Cleanup(srv.Close)
	return &guarded{g: g, srv: srv, logs: logs}
}

// get sends GET /v1/posts with the key and returns the status and request
// id of the answer.
func (a *guarded) get(t *testing.T, ctx context.Context, key string) (int, string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.srv.URL+"/v1/posts", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	r, err := a.srv.Client().Do(req)
	if err != nil {
		return 0, "", err
	}
	r.Body.Close()
	return r.StatusCode, r.Header.Get("X-Request-Id"), nil
}

// spend spends the failed-authentication budget of limit: limit answers
// 401, then the 429 of the full path, which notes the client IP as spent.
func (a *guarded) spend(t *testing.T, limit int) {
	t.Helper()
	for i := range limit + 1 {
		want := http.StatusUnauthorized
		if i == limit {
			want = http.StatusTooManyRequests
		}
		if got, _, err := a.get(t, context.Background(), "fapi_unknown"); err != nil || got != want {
			t.Fatalf("request %d: status %d (%v), want %d", i, got, err, want)
		}
	}
}

// waitFor polls cond until it holds, giving the server real time (30 s) on
// a loaded machine.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestEarlyRefusalHold: an early refusal is held for RefusalDelay before it
// is answered, at most RefusalHoldMax at once (the next ones are answered
// at once); a client that leaves frees its place.
func TestEarlyRefusalHold(t *testing.T) {
	t.Parallel()
	const limit = 1
	a := newGuarded(t, Config{AuthFailureLimit: limit, RefusalDelay: time.Hour, RefusalHoldMax: 1})
	a.spend(t, limit) // the full path's 429 is not held

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	heldErr := make(chan error, 1)
	go func() {
		_, _, err := a.get(t, ctx, "fapi_held")
		heldErr <- err
	}()
	f := a.g.refuser
	waitFor(t, "one refusal held", func() bool { return f.held.Load() == 1 })
	// The place is taken: this one is answered at once (held, it would
	// wait an hour and the test would time out).
	if got, _, err := a.get(t, context.Background(), "fapi_other"); err != nil || got != http.StatusTooManyRequests {
		t.Fatalf("status %d (%v), want 429", got, err)
	}
	select {
	case err := <-heldErr:
		t.Fatalf("the held refusal was answered (%v), want held", err)
	default:
	}
	cancel()
	if err := <-heldErr; err == nil {
		t.Fatalf("the held request got an answer, want the client's cancellation")
	}
	waitFor(t, "the place freed", func() bool { return f.held.Load() == 0 })
}

// TestEarlyRefusalLog: early refusals are summed up in one line per client
// IP and interval ("requests refused", refused=N) instead of a line each.
func TestEarlyRefusalLog(t *testing.T) {
	t.Parallel()
	const limit = 1
	a := newGuarded(t, Config{AuthFailureLimit: limit, RefusalDelay: -1, RefusalLogInterval: time.Hour})
	a.spend(t, limit)
	var first string
	for i := range 5 {
		got, id, err := a.get(t, context.Background(), "fapi_unknown")
		if err != nil || got != http.StatusTooManyRequests {
			t.Fatalf("status %d (%v), want 429", got, err)
		}
		if i == 0 {
			first = id
		}
	}
	if strings.Contains(a.logs.String(), "requests refused") {
		t.Fatalf("summary logged before its interval ended:\n%s", a.logs.String())
	}
	a.g.refuser.log.flush("127.0.0.1")
	want := "msg=\"requests refused\" client_ip=127.0.0.1 refused=5 policy=failed_auth seconds=3600 first_request_id=" + first
	if got := strings.Count(a.logs.String(), want); got != 1 {
		t.Errorf("summary lines %q: %d, want 1; log:\n%s", want, got, a.logs.String())
	}
	// Flushed once: nothing more to say.
	a.g.refuser.log.flush("127.0.0.1")
	if got := strings.Count(a.logs.String(), "requests refused"); got != 1 {
		t.Errorf("%d summary lines after a second flush, want 1", got)
	}
}
