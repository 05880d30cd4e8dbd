package rest

import (
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/feedapi/feedapi/graph/live"
	"github.com/feedapi/feedapi/rest/auth"
	"github.com/feedapi/feedapi/rest/envelope"
	"github.com/feedapi/feedapi/rest/landing"
	"github.com/feedapi/feedapi/rest/pollcache"
	"github.com/feedapi/feedapi/rest/static"
)

// server is the REST layer built by New.
type server struct {
	guard     *auth.Guard
	env       *envelope.Writer
	queries   *runner
	graphql   http.Handler
	graphiql  *static.Page
	dashboard *static.Page
	landing   *landing.Landing
	reference *static.Page
	openapi   []byte
	live      *live.Live
	// drains counts the stream writes the kernel did not take at once
	// (package rest/sse).
	drains         atomic.Int64
	log            *slog.Logger
	requestTimeout time.Duration
	observe        func(http.Handler) http.Handler // the access log (rest/accesslog)
	cors           func(http.Handler) http.Handler
	polls          *pollcache.Cache
	pollHint       []string // X-Poll-Interval
}

// writeError writes the error envelope of err (envelope.Writer.Error).
func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	s.env.Error(w, r, err)
}
