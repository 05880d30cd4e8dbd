// Package accesslog writes one access log line per request and records its
// Prometheus metrics (rest/metrics), once the request is answered or, for a
// stream handed over to the live feeds, once the stream ends. The layers a
// request passes through note what the line needs in its Record: the key
// (rest/auth), a refusal by the failed-authentication budget. The line holds
// no path and no query string, where a client may have put a secret.
package accesslog

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/feedapi/feedapi/rest/envelope"
	"github.com/feedapi/feedapi/rest/metrics"
)

// Options are what the access log needs of the REST layer.
type Options struct {
	// Logger receives the lines, at info level; nil or disabled at info:
	// no line.
	Logger *slog.Logger
	// Metrics records each request; nil: none.
	Metrics *metrics.Metrics
	// ClientIP is the client IP of a request (rest/auth.ClientIP).
	ClientIP func(*http.Request) string
}

// Record is what the access log and the metrics learn of a request while
// it passes through the layers: the key, once one is authenticated.
type Record struct {
	keyID  int64
	tier   string
	hasKey bool
	// authBudget: refused 429 because the client IP's failed
	// authentications are spent.
	authBudget bool
	// snapshot takes what the access log line and the metrics need of the
	// request (set by observe); takenOver: TakeOver was called.
	snapshot  func() func(extraBytes int64)
	takenOver bool
}

// NoteKey notes the key the request authenticated with.
func (a *Record) NoteKey(keyID int64, tier string) {
	if a != nil {
		a.keyID, a.tier, a.hasKey = keyID, tier, true
	}
}

// NoteAuthBudget notes that the request was refused 429 because its client
// IP's failed authentications are spent.
func (a *Record) NoteAuthBudget() {
	if a != nil {
		a.authBudget = true
	}
}

// TakeOver is for a handler that hands its connection to something that
// outlives it (a hijacked SSE stream): the access log line and the metrics
// are not written when the handler returns but when the returned function
// is called (once; later calls do nothing), with the body bytes written
// since the hand-over, so that the request's duration is the stream's. It
// must be called from the handler, after the status is written. Without
// Middleware (no log, no metrics) the returned function does nothing.
func (a *Record) TakeOver() func(extraBytes int64) {
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
func (a *Record) refusalScope() string {
	switch {
	case a.authBudget:
		return metrics.ScopeAuth
	case a.hasKey:
		return metrics.ScopeKey
	}
	return metrics.ScopeIP
}

type accessKey struct{}

// Of returns the record of the request ctx belongs to, or nil (whose
// methods do nothing).
func Of(ctx context.Context) *Record {
	a, _ := ctx.Value(accessKey{}).(*Record)
	return a
}

// Middleware is the outermost middleware: once the request is answered it
// writes one access log line (at info level, message "request") and
// records the request's metrics. The line holds request_id, method, route
// (chi's pattern, e.g. /v1/posts/{id}, or "unmatched"), status (499 for a
// failure whose client had gone away), duration_ms, bytes (of the body as
// sent), key_id and tier (null without a valid key) and client_ip. It holds neither the path nor the query string,
// where a client may have put a secret.
func Middleware(o Options) func(http.Handler) http.Handler {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return func(next http.Handler) http.Handler { return o.observe(next) }
}

func (o Options) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		logOn := o.Logger.Enabled(r.Context(), slog.LevelInfo)
		if o.Metrics == nil && !logOn {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		a := &Record{}
		cw := &countingWriter{ResponseWriter: w}
		r = r.WithContext(context.WithValue(r.Context(), accessKey{}, a))
		// snapshot takes, in the handler's goroutine, what the line needs
		// of the request, its route (chi's context is reused once the
		// handler returns) and its ResponseWriter; the function it returns
		// reports, possibly later (TakeOver).
		a.snapshot = func() func(int64) {
			status := cw.status
			if status == 0 {
				status = http.StatusOK // what net/http sends for a handler that wrote nothing
			}
			if status >= http.StatusInternalServerError && envelope.ClientClosed(r.Context()) {
				// Nobody received the 500: the failure was the client's leaving.
				status = statusClientClosed
			}
			route := envelope.RoutePattern(r)
			scope := a.refusalScope()
			bytes := cw.bytes
			requestID := w.Header().Get("X-Request-Id")
			method := envelope.Truncate(r.Method, 20)
			keyID, tier := slog.Any("key_id", nil), slog.Any("tier", nil)
			if a.hasKey {
				keyID, tier = slog.Int64("key_id", a.keyID), slog.String("tier", a.tier)
			}
			clientIP := o.ClientIP(r)
			ctx := r.Context()
			return func(extra int64) {
				d := time.Since(start)
				o.Metrics.ObserveRequest(method, route, status, d, scope)
				if !logOn {
					return
				}
				o.Logger.LogAttrs(ctx, slog.LevelInfo, "request",
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
		// http.ErrAbortHandler, passed on by rest's begin) is still reported.
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
