package rest

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/rest/envelope"
)

// isLive reports whether a /graphql request opens a subscription: a
// websocket upgrade (graphql-transport-ws) or a POST that accepts
// text/event-stream (gqlgen's SSE transport).
func isLive(r *http.Request) bool {
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return true
	}
	return r.Method == http.MethodPost && strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// serveLive runs a live /graphql request: the response goes straight to the
// client (flushed per event) with no server read deadline; each write must
// be taken within the stuck-write limit, and one that is not ends the
// request. Its subscriptions end with their feeds (at shutdown, when the
// key is revoked); a websocket is closed by the graph layer then.
func (s *server) serveLive(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	ctx, cancel := context.WithCancel(graph.WithRequestID(r.Context(), envelope.RequestID(r.Context())))
	defer cancel()
	s.graphql.ServeHTTP(&flushWriter{ResponseWriter: w, rc: rc, stuck: s.live.Config().StuckWrite(), cancel: cancel},
		r.WithContext(ctx))
}

// flushWriter gives gqlgen's SSE transport the http.Flusher it asks for,
// bounds each of its writes in time, and gives the websocket library the
// writer to hijack (Unwrap).
type flushWriter struct {
	http.ResponseWriter
	rc     *http.ResponseController
	stuck  time.Duration
	cancel context.CancelFunc // ends the request when a write fails
}

func (f *flushWriter) Write(b []byte) (int, error) {
	_ = f.rc.SetWriteDeadline(time.Now().Add(f.stuck))
	n, err := f.ResponseWriter.Write(b)
	if err != nil {
		f.cancel()
	}
	return n, err
}

func (f *flushWriter) Flush() {
	if err := f.rc.Flush(); err != nil {
		f.cancel()
	}
}

func (f *flushWriter) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// clientIPKey carries the client IP of a websocket upgrade without an
// Authorization header to websocketInit.
type clientIPKey struct{}

// websocketWithoutHeader lets a websocket upgrade without an Authorization
// header through to /graphql (browsers cannot set headers on a websocket):
// its key is then checked on the connection_init payload by
// websocketInit, and until then the request counts against the client IP's
// limit. Every other request goes on to the key checks.
func (s *server) websocketWithoutHeader(next http.Handler) http.Handler {
	live := s.guard.IPLimited(http.HandlerFunc(s.serveLive))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket") &&
			r.Header.Get("Authorization") == "" {
			r = r.WithContext(context.WithValue(r.Context(), clientIPKey{}, s.guard.ClientIP(r)))
			live.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// socketContext is the context a websocket's operations start from: the
// upgrade request's key, client IP and request id, and none of its values
// that hold the request.
func (s *server) socketContext(ctx context.Context) context.Context {
	out := graph.WithRequestID(context.Background(), envelope.RequestID(ctx))
	if p, ok := keys.FromContext(ctx); ok {
		out = keys.WithPrincipal(out, p)
	}
	if ip, ok := ctx.Value(clientIPKey{}).(string); ok {
		out = context.WithValue(out, clientIPKey{}, ip)
	}
	return out
}

// websocketInit checks the key of a websocket connection: the upgrade
// request's Authorization header (already checked by the route), or else
// the connection_init payload's (auth.Guard.Socket); the connection counts
// once against the key's rate limit, and then each operation sent on it
// (auth.Guard.Charge).
func (s *server) websocketInit(ctx context.Context, payload map[string]any) (context.Context, error) {
	if _, ok := keys.FromContext(ctx); ok {
		return ctx, nil
	}
	ip, _ := ctx.Value(clientIPKey{}).(string)
	p, err := s.guard.Socket(ctx, payload, ip)
	if err != nil {
		return nil, err
	}
	ctx = keys.WithPrincipal(ctx, p)
	if err := s.guard.Charge(ctx); err != nil {
		return nil, err
	}
	return ctx, nil
}
