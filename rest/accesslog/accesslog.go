package rest

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/rest/metrics"
)

// access is what the access log and the metrics learn of a request while
// it passes through the layers: the key, once one is authenticated.
type access struct {
	keyID  int64
	tier   string
	hasKey bool
	// authBudget: refused 429 because the client IP's failed
	// authentications are spent.
	authBudget bool
	// snapshot takes what the access log line and the metrics need of the
	// request (set by observe); takenOver: takeOver was called.
	snapshot  func() func(extraBytes int64)
	takenOver bool
}

// takeOver is for a handler that hands its connection to something that
// outlives it (a hijacked SSE stream): the access log line and the metrics
// are not written when the handler returns but when the returned function
// is called (once; later calls do nothing), with the body bytes written
// since the hand-over, so that the request's duration is the stream's. It
// must be called from the handler, after the status is written. Without
// observe (no log, no metrics) the returned function does nothing.
func (a *access) takeOver() func(extraBytes int64) {
	if a == nil || a.snapshot == nil {
		return func(int64) {}
	}
	a.takenOver = true
	report := a.snapshot()
	// The snapshot holds the ResponseWriter, and with it net/http's
	// buffers of the connection: the request's context (which holds a)
	// lives on with the stream, they must not.
	a.snapshot = nil
	var once sync.Once
	return func(extra int64) { once.Do(func() { report(extra) }) }
}

// refusalScope is the limit a 429 of this request came from.
func (a *access) refusalScope() string {
	switch {
	case a.authBudget:
		return metrics.ScopeAuth
	case a.hasKey:
		return metrics.ScopeKey
	}
	return metrics.ScopeIP
}

type accessKey struct{}

// accessOf returns the access record of the request ctx belongs to, or nil.
func accessOf(ctx context.Context) *access {
	a, _ := ctx.Value(accessKey{}).(*access)
	return a
}

// observedKeys notes the key of every successful authentication in the
// request's access record, so that the access log reports the key's id and
// tier (never the key) whichever route looked it up.
type observedKeys struct {
	Authenticator
}

// Authenticate implements Authenticator.
func (k observedKeys) Authenticate(ctx context.Context, secret string) (keys.Principal, error) {
	p, err := k.Authenticator.Authenticate(ctx, secret)
	if err == nil {
		if a := accessOf(ctx); a != nil {
			a.keyID, a.tier, a.hasKey = p.KeyID, string(p.Tier), true
		}
	}
	return p, err
}

// observe is the outermost middleware: once the request is answered it
// writes one access log line (at info level, message "request") and
// records the request's metrics. The line holds request_id, method, route
// (chi's pattern, e.g. /v1/posts/{id}, or "unmatched"), status (499 for a
// failure whose client had gone away), duration_ms, bytes (of the body as
// sent), key_id and tier (null without a valid key) and client_ip. It holds neither the path nor the query string,
// where a client may have put a secret.
func (s *server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		logOn := s.log.Enabled(r.Context(), slog.LevelInfo)
		if s.metrics == nil && !logOn {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		a := &access{}
		cw := &countingWriter{ResponseWriter: w}
		r = r.WithContext(context.WithValue(r.Context(), accessKey{}, a))
		// snapshot takes, in the handler's goroutine, what the line needs
		// of the request, its route (chi's context is reused once the
		// handler returns) and its ResponseWriter; the function it returns
		// reports, possibly later (takeOver).
		a.snapshot = func() func(int64) {
			status := cw.status
			if status == 0 {
				status = http.StatusOK // what net/http sends for a handler that wrote nothing
			}
			if status >= http.StatusInternalServerError && clientClosed(r.Context()) {
				// Nobody received the 500: the failure was the client's leaving.
				status = statusClientClosed
			}
			route := routePattern(r)
			scope := a.refusalScope()
			bytes := cw.bytes
			requestID := w.Header().Get("X-Request-Id")
			method := truncate(r.Method, 20)
			keyID, tier := slog.Any("key_id", nil), slog.Any("tier", nil)
			if a.hasKey {
				keyID, tier = slog.Int64("key_id", a.keyID), slog.String("tier", a.tier)
			}
			clientIP := s.clientIP(r)
			ctx := r.Context()
			return func(extra int64) {
				d := time.Since(start)
				s.metrics.ObserveRequest(method, route, status, d, scope)
				if !logOn {
					return
				}
				s.log.LogAttrs(ctx, slog.LevelInfo, "request",
					slog.String("request_id", requestID),
					slog.String("method", method),
					slog.String("route", route),
					slog.Int("status", status),
					slog.Float64("duration_ms", math.Round(float64(d.Microseconds()))/1000),
					slog.Int64("bytes", bytes+extra),
					keyID,
					tier,
					slog.String("client_ip", clientIP))
			}
		}
		// Deferred, so that a request whose handler aborts (a panic of
		// http.ErrAbortHandler, passed on by begin) is still reported.
		defer func() {
			if !a.takenOver {
				a.snapshot()(0)
			}
		}()
		next.ServeHTTP(cw, r)
	})
}

// statusClientClosed is the status the access log and the metrics give a
// request whose client closed its connection before the answer (nginx's
// 499), instead of the 500 that the abandoned work ended with.
const statusClientClosed = 499

// clientClosed reports whether ctx, a request's context, was cancelled
// because its client went away (not by the request timeout).
func clientClosed(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled)
}

// countingWriter records the status and counts the body bytes of a
// response.
type countingWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *countingWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *countingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// routePattern returns the chi pattern that matched r (such as
// /v1/posts/{id}), or metrics.RouteUnmatched: a bounded set of values, safe for
// metric labels and logs, unlike the path a client sent.
func routePattern(r *http.Request) string {
	if rc := chi.RouteContext(r.Context()); rc != nil {
		if p := rc.RoutePattern(); p != "" {
			return p
		}
	}
	return metrics.RouteUnmatched
}
