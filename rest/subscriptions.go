package rest

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/keys"
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

// serveLive runs a subscription request: the response goes straight to the
// client (flushed per event), with no server read or write deadline, and
// ends when the client leaves or the server shuts down.
func (s *server) serveLive(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	ctx, cancel := context.WithCancel(graph.WithRequestID(r.Context(), requestID(r.Context())))
	defer cancel()
	go func() {
		select {
		case <-s.streams.cfg.Done:
			cancel()
		case <-ctx.Done():
		}
	}()
	s.graphql.ServeHTTP(&flushWriter{ResponseWriter: w, rc: rc}, r.WithContext(ctx))
}

// flushWriter gives gqlgen's SSE transport the http.Flusher it asks for,
// and the websocket library the writer to hijack (Unwrap).
type flushWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (f *flushWriter) Flush() { _ = f.rc.Flush() }

func (f *flushWriter) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// websocketWithoutHeader lets a websocket upgrade without an Authorization
// header through to /graphql (browsers cannot set headers on a websocket):
// its key is then checked on the connection_init payload by
// websocketInit, and until then the request counts against the client IP's
// limit. Every other request goes on to the key checks.
func (s *server) websocketWithoutHeader(next http.Handler) http.Handler {
	live := s.ipLimited(http.HandlerFunc(s.serveLive))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket") &&
			r.Header.Get("Authorization") == "" {
			live.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// websocketInit checks the key of a websocket connection: the upgrade
// request's Authorization header (already checked by the route), or else
// the connection_init payload's "Authorization" ("Bearer fapi_…") or
// "key". The key must be of tier internal, and the connection counts once
// against its rate limit.
func (s *server) websocketInit(ctx context.Context, payload map[string]any) (context.Context, error) {
	if _, ok := keys.FromContext(ctx); ok {
		return ctx, nil
	}
	var secret string
	if v, ok := payload["Authorization"].(string); ok {
		secret, _ = bearer([]string{v})
	} else if v, ok := payload["authorization"].(string); ok {
		secret, _ = bearer([]string{v})
	} else if v, ok := payload["key"].(string); ok {
		secret = v
	}
	if secret == "" {
		return nil, errors.New("connection_init needs the key: {\"Authorization\": \"Bearer fapi_…\"}")
	}
	p, err := s.keys.Authenticate(ctx, secret)
	if err != nil {
		if apperr.CodeOf(err) == apperr.Unauthorized {
			return nil, errors.New("the key is unknown or revoked")
		}
		return nil, errors.New("the key could not be checked; try again")
	}
	if p.Tier != "internal" {
		return nil, errors.New("subscriptions need a key of tier internal")
	}
	limit := s.rateLimit
	if n, ok := s.tierRateLimits[string(p.Tier)]; ok {
		limit = n
	}
	if d := s.rates.take(ctx, budgetKey+strconv.FormatInt(p.KeyID, 10), limit); !d.allowed {
		return nil, errors.New("rate limit exceeded")
	}
	return keys.WithPrincipal(ctx, p), nil
}
