package rest

import (
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/feedapi/feedapi/graph/live"
	"github.com/feedapi/feedapi/rest/auth"
	"github.com/feedapi/feedapi/rest/dashboard"
	"github.com/feedapi/feedapi/rest/envelope"
	"github.com/feedapi/feedapi/rest/graphiql"
	"github.com/feedapi/feedapi/rest/landing"
	"github.com/feedapi/feedapi/rest/pollcache"
	"github.com/feedapi/feedapi/rest/reference"
	"github.com/feedapi/feedapi/rest/static"
)

// server is the REST layer built by New.
type server struct {
	guard   *auth.Guard
	env     *envelope.Writer
	queries *runner
	graphql http.Handler
	pages
	openapi []byte
	live    *live.Live
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

// pages are the service's HTML pages, which hold no data.
type pages struct {
	graphiql, dashboard, reference *static.Page
	landing                        *landing.Landing
}

// newPages renders the pages; etf: the deployment serves ETF flows, which
// the dashboard shows.
func newPages(etf bool) (pages, error) {
	var p pages
	var err error
	if p.graphiql, err = graphiql.New(); err != nil {
		return p, err
	}
	if p.dashboard, err = dashboard.New(etf); err != nil {
		return p, err
	}
	if p.landing, err = landing.New(); err != nil {
		return p, err
	}
	p.reference, err = reference.New()
	return p, err
}

// writeError writes the error envelope of err (envelope.Writer.Error).
func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	s.env.Error(w, r, err)
}
