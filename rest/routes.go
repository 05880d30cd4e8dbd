package rest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/rest/contract"
	"github.com/feedapi/feedapi/rest/envelope"
	"github.com/feedapi/feedapi/rest/landing"
)

// routes builds the router. Order of checks on a keyed request: key (401),
// tier (403), rate limit (429), then the endpoint's parameters (400) and
// its result (404 or 200). CORS preflights are answered before all of them.
// A client IP whose failed authentications are spent gets its 429 before
// any of this (auth.Guard.Refusals).
func (s *server) routes(eps []endpoint, streamEps []streamEndpoint) http.Handler {
	r := chi.NewRouter()
	g := s.guard
	r.Use(s.deadline, s.observe, s.begin, s.cors)
	r.NotFound(g.IPLimited(g.OptionalKey(http.HandlerFunc(s.notFound))).ServeHTTP)
	r.MethodNotAllowed(g.IPLimited(g.OptionalKey(http.HandlerFunc(s.methodNotAllowed))).ServeHTTP)

	// No key: limited per client IP.
	r.Group(func(r chi.Router) {
		r.Use(g.IPLimited)
		getHead(r, "/v1/health", http.HandlerFunc(s.health))
		getHead(r, "/v1/openapi.json", http.HandlerFunc(s.openAPI))
	})
	// A stream has no HEAD: 405 as for any other method it does not take,
	// answered as the router's own 405s are (without a key's charge),
	// rather than matching /v1/posts/{id}.
	for _, ep := range streamEps {
		r.Method(http.MethodHead, ep.Path, g.IPLimited(g.OptionalKey(http.HandlerFunc(s.methodNotAllowed))))
	}
	// Keyed /v1 endpoints: open to every tier.
	keyed := map[string]bool{} // patterns behind Authenticate, for the early refusals
	r.Group(func(r chi.Router) {
		r.Use(g.Authenticate, g.Keyed("free", "pro", "internal"))
		for _, ep := range eps {
			getHead(r, ep.Path, s.serve(ep))
			keyed[ep.Path] = true
		}
		for _, ep := range streamEps {
			r.Method(http.MethodGet, ep.Path, s.serveStream(ep))
			keyed[ep.Path] = true
		}
	})
	// The GraphiQL page's assets: no key, limited per client IP.
	getHead(r, contract.GraphiQLAssetsPath+"/*", g.IPLimited(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.graphiql.ServeAsset(w, r, s.notFound)
	})))
	// The dashboard and its assets: no key (the page asks for one and
	// reads /graphql with it), limited per client IP.
	getHead(r, contract.DashboardPath, g.IPLimited(http.HandlerFunc(s.dashboard.ServePage)))
	getHead(r, contract.DashboardAssetsPath+"/*", g.IPLimited(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.dashboard.ServeAsset(w, r, s.notFound)
	})))
	s.landingRoutes(r)
	// GraphQL for internal dashboards.
	r.Group(func(r chi.Router) {
		r.Use(s.playgroundWithoutKey, s.websocketWithoutHeader, g.Authenticate, g.Keyed("internal"))
		r.Method(http.MethodGet, "/graphql", http.HandlerFunc(s.serveGraphQL))
		r.Method(http.MethodPost, "/graphql", http.HandlerFunc(s.serveGraphQL))
	})
	return &apiHandler{Handler: g.Refusals(r, keyed), server: s, mux: r, endpoints: eps, streamEps: streamEps}
}

// apiHandler is the whole API's handler: the router behind the early
// refusals of rest/auth, with what it routes.
type apiHandler struct {
	http.Handler
	*server
	mux       *chi.Mux
	endpoints []endpoint
	streamEps []streamEndpoint
}

// playgroundWithoutKey serves the GraphiQL page of GET /graphql (a browser
// asking for text/html, no query) without a key, limited per client IP: the
// page is static and holds no data, and a browser cannot attach a bearer key
// to a navigation. The page asks its user for the key; the queries it sends
// carry it and go through the key and tier checks as usual.
func (s *server) playgroundWithoutKey(next http.Handler) http.Handler {
	page := s.guard.IPLimited(http.HandlerFunc(s.graphiql.ServePage))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.RawQuery == "" && strings.Contains(r.Header.Get("Accept"), "text/html") {
			page.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// deadline bounds the context of every request by Config.RequestTimeout,
// except the SSE streams', which bound each of their reads instead.
func (s *server) deadline(next http.Handler) http.Handler {
	if s.requestTimeout <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/stream") || (r.URL.Path == "/graphql" && isLive(r)) {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.requestTimeout)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// getHead routes GET and HEAD of pattern to h.
func getHead(r chi.Router, pattern string, h http.Handler) {
	r.Method(http.MethodGet, pattern, h)
	r.Method(http.MethodHead, pattern, h)
}

// allowed returns the Allow header of a known path.
func allowed(path string) string {
	if path == "/graphql" {
		return "GET, POST"
	}
	if strings.HasSuffix(path, "/stream") {
		return "GET"
	}
	return "GET, HEAD"
}

func (s *server) notFound(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, r, apperr.New(apperr.NotFound, "no such path: "+envelope.Truncate(r.URL.Path, 100)))
}

func (s *server) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	allow := allowed(r.URL.Path)
	w.Header().Set("Allow", allow)
	s.writeError(w, r, apperr.New(apperr.MethodNotAllowed,
		"method "+envelope.Truncate(r.Method, 20)+" is not allowed on "+envelope.Truncate(r.URL.Path, 100)+"; allowed: "+allow))
}

// MaxHeaderBytes is the largest request line and header fields a request
// may have; a larger one is refused with 431 in the error envelope.
const MaxHeaderBytes = 16 << 10

// headerBytes is the size of r's request line and header fields as sent
// (give or take the spelling of line ends and spaces).
func headerBytes(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + 2
	n += len("Host: ") + len(r.Host) + 2
	for name, values := range r.Header {
		for _, v := range values {
			n += len(name) + 2 + len(v) + 2
		}
	}
	return n + 2
}

// begin gives the request its id (X-Request-Id and meta.request_id), marks
// every answer X-Content-Type-Options: nosniff, refuses a header larger
// than MaxHeaderBytes with 431 in the envelope, and turns a panic into a 500
// envelope. observe, around it, logs the request.
func (s *server) begin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := envelope.NewRequestID(start)
		w.Header().Set("X-Request-Id", id)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		r = r.WithContext(envelope.WithRequestID(r.Context(), id))
		sw := &statusWriter{ResponseWriter: w}
		if n := headerBytes(r); n > MaxHeaderBytes {
			s.env.ErrorStatus(sw, r, http.StatusRequestHeaderFieldsTooLarge, apperr.New(apperr.BadRequest,
				fmt.Sprintf("the request line and header fields take %d bytes, more than the limit of %d", n, MaxHeaderBytes)))
			return
		}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				err := fmt.Errorf("panic: %v\n%s", v, debug.Stack())
				if sw.status == 0 {
					s.writeError(sw, r, err)
				} else {
					s.log.ErrorContext(r.Context(), "panic after the response started",
						slog.String("request_id", id), slog.Any("error", err))
				}
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

// recoverResolver turns a panic in a resolver of a REST query into an
// internal error, logged with the request id.
func (s *server) recoverResolver(ctx context.Context, v any) error {
	s.log.ErrorContext(ctx, "panic in resolver",
		slog.String("request_id", envelope.RequestID(ctx)),
		slog.Any("panic", v),
		slog.String("stack", string(debug.Stack())))
	return fmt.Errorf("resolver panicked: %v", v)
}

// statusWriter records the status of the response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// landingRoutes routes the landing page and the API reference with its
// assets: no key (they hold no data), limited per client IP.
func (s *server) landingRoutes(r chi.Router) {
	for _, p := range contract.LandingPaths {
		getHead(r, p, s.guard.IPLimited(http.HandlerFunc(s.serveLanding)))
	}
	getHead(r, contract.ReferencePath, s.guard.IPLimited(http.HandlerFunc(s.reference.ServePage)))
	getHead(r, contract.ReferenceAssetsPath+"/*", s.guard.IPLimited(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.reference.ServeAsset(w, r, s.notFound)
	})))
}

// serveLanding answers the landing page: HTML to a client that prefers it
// to JSON (a browser), else the envelope, as everywhere else in the API.
// It takes no query parameters, like every other endpoint.
func (s *server) serveLanding(w http.ResponseWriter, r *http.Request) {
	if _, err := contract.Parse(r.URL.RawQuery, nil); err != nil {
		s.writeError(w, r, err)
		return
	}
	h := w.Header()
	h["Vary"] = append(h["Vary"][:len(h["Vary"]):len(h["Vary"])], "Accept")
	if landing.PrefersHTML(r.Header.Values("Accept")) {
		s.landing.Page.ServePage(w, r)
		return
	}
	s.env.Success(w, r, envelope.Success{Data: s.landing.Data, Cache: landing.Cache})
}
