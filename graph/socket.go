package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/graph/live"
)

// The websocket connections of /graphql (graphql-transport-ws), through
// gqlgen's websocket transport and its supported extension points: an
// implementation of transport.WebsocketImplementation over
// coder/websocket whose writes are bounded in time, an InitFunc that
// closes a refused connection_init with the protocol's close code, and an
// operation interceptor that charges every operation on a socket to its
// key. A socket is a live connection: it is closed when its key is
// revoked and when the server shuts down, and Shutdown waits for it.

// Close codes of graphql-transport-ws and RFC 6455 that feedapi sends.
const (
	closeBadRequest   = 4400 // connection_init whose payload is not an object
	closeUnauthorized = 4401 // no key, an unknown or a revoked one
	closeForbidden    = 4403 // a key whose tier may not use /graphql
	closeInitTimeout  = 4408 // no connection_init in time
	closeTooMany      = 4429 // the key's rate limit is spent
	closeTryAgain     = 1013 // the key could not be checked
	closeGoingAway    = 1001 // the server shuts down
)

// InitTimeout is how long a websocket may take to send connection_init
// after its upgrade: a socket that does not is closed.
const InitTimeout = 5 * time.Second

// socketKey marks the context of the operations sent on a websocket.
type socketKey struct{}

// overSocket reports whether ctx is an operation's on a websocket.
func overSocket(ctx context.Context) bool {
	_, ok := ctx.Value(socketKey{}).(*socket)
	return ok
}

// holderKey carries, in the upgrade request's context, the place where
// Accept puts the socket, so that the handler and the InitFunc find it.
type holderKey struct{}

type socketHolder struct{ s *socket }

func socketOf(ctx context.Context) *socket {
	if h, ok := ctx.Value(holderKey{}).(*socketHolder); ok {
		return h.s
	}
	return nil
}

// socketImpl accepts websocket upgrades with coder/websocket.
type socketImpl struct {
	stuck time.Duration // the longest a write may block before the socket is cut
}

func (i socketImpl) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	for key, values := range opts.ResponseHeader {
		for _, v := range values {
			w.Header().Add(key, v)
		}
	}
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: opts.Subprotocols})
	if err != nil {
		return nil, err
	}
	s := &socket{conn: conn, stuck: i.stuck}
	if h, ok := r.Context().Value(holderKey{}).(*socketHolder); ok {
		h.s = s
	}
	return s, nil
}

// socket is one websocket connection: gqlgen's transport.WebsocketConn.
type socket struct {
	conn  *websocket.Conn
	stuck time.Duration

	mu        sync.Mutex
	readTimer *time.Timer
	closing   bool // a close handshake runs, or the connection is closed

	// What the socket holds once its connection_init was accepted: the
	// watch of its key's revocation, the watch of the shutdown, and its
	// place among the live connections. Guarded by mu.
	release []func()
}

var (
	_ transport.WebsocketConn          = (*socket)(nil)
	_ transport.WebsocketReadLimiter   = (*socket)(nil)
	_ transport.WebsocketReadDeadliner = (*socket)(nil)
)

func (s *socket) NextReader() (int, io.Reader, error) {
	typ, data, err := s.conn.Read(context.Background())
	if err != nil {
		switch websocket.CloseStatus(err) {
		case websocket.StatusNormalClosure, websocket.StatusNoStatusRcvd:
			return int(typ), nil, transport.ErrWebsocketClosed
		}
		return int(typ), nil, err
	}
	return int(typ), bytes.NewReader(data), nil
}

// WriteJSON writes v as one text message; a write the client does not take
// within the stuck-write bound cuts the connection.
func (s *socket) WriteJSON(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.stuck)
	defer cancel()
	return s.conn.Write(ctx, websocket.MessageText, data)
}

// WriteClose starts the close handshake with code and reason, once, in the
// background: coder/websocket waits up to 5 s for the peer's close frame.
func (s *socket) WriteClose(code int, reason string) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	s.stopReadTimer()
	s.mu.Unlock()
	go func() { _ = s.conn.Close(websocket.StatusCode(code), reason) }()
	return nil
}

// Close closes the connection at once unless a close handshake runs, which
// closes it itself.
func (s *socket) Close() error {
	s.mu.Lock()
	handshake := s.closing
	s.closing = true
	s.stopReadTimer()
	s.mu.Unlock()
	if handshake {
		return nil
	}
	return s.conn.CloseNow()
}

func (s *socket) Subprotocol() string { return s.conn.Subprotocol() }

func (s *socket) SetReadLimit(limit int64) { s.conn.SetReadLimit(limit) }

// SetReadDeadline closes the connection at t unless a later call moves it
// (the transport's pong deadline).
func (s *socket) SetReadDeadline(t time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopReadTimer()
	if t.IsZero() {
		return nil
	}
	s.readTimer = time.AfterFunc(time.Until(t), func() { _ = s.conn.CloseNow() })
	return nil
}

func (s *socket) stopReadTimer() {
	if s.readTimer != nil {
		s.readTimer.Stop()
		s.readTimer = nil
	}
}

// hold keeps what the socket must give back when it ends.
func (s *socket) hold(release ...func()) {
	s.mu.Lock()
	s.release = append(s.release, release...)
	s.mu.Unlock()
}

// end gives back what the socket holds and closes it, with code and
// reason unless it is closed already.
func (s *socket) end(code int, reason string) {
	_ = s.WriteClose(code, reason)
	s.mu.Lock()
	release := s.release
	s.release = nil
	s.mu.Unlock()
	for _, f := range release {
		f()
	}
}

// initSocket is the transport's InitFunc: check (Config.WebsocketInit)
// decides on the key; a refusal closes the socket with its close code and
// the error's message as the reason. An accepted socket's operations are
// marked (overSocket), and it is registered with the live feeds: closed
// when its key is revoked or the server shuts down.
func initSocket(l *live.Live, check func(context.Context, map[string]any) (context.Context, error)) transport.WebsocketInitFunc {
	return func(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
		s := socketOf(ctx)
		if check != nil {
			next, err := check(ctx, payload)
			if err != nil {
				code, reason := initRefusal(err)
				return transport.WithWebsocketCloseCode(transport.AppendCloseReason(ctx, reason), code), nil, errors.New(reason)
			}
			ctx = next
		}
		if s == nil {
			return ctx, nil, nil
		}
		ctx = context.WithValue(ctx, socketKey{}, s)
		if l == nil {
			return ctx, nil, nil
		}
		done, err := l.Track()
		if err != nil {
			return transport.WithWebsocketCloseCode(transport.AppendCloseReason(ctx, live.EndShutdown.Message+"; reconnect"), closeGoingAway),
				nil, err
		}
		stop := context.AfterFunc(l.Context(), func() { s.end(closeGoingAway, live.EndShutdown.Message+"; reconnect") })
		s.hold(done, func() { stop() })
		if p, ok := keys.FromContext(ctx); ok {
			s.hold(l.Watch(p.KeyID, func(e live.End) { s.end(closeUnauthorized, e.Message) }))
		}
		return ctx, nil, nil
	}
}

// initRefusal is the close code and reason of a refused connection_init.
func initRefusal(err error) (int, string) {
	d := apperr.As(err)
	if d == nil {
		return closeTryAgain, "the key could not be checked; try again"
	}
	code := closeBadRequest
	switch d.Code {
	case apperr.Unauthorized:
		code = closeUnauthorized
	case apperr.ForbiddenTier:
		code = closeForbidden
	case apperr.RateLimited:
		code = closeTooMany
	}
	// A close frame's reason holds at most 123 bytes.
	reason := d.Message
	if len(reason) > 123 {
		reason = reason[:120] + "..."
	}
	return code, reason
}

// serveSocket runs a websocket upgrade through srv and makes sure the
// connection is closed and given back when the transport is done with it:
// gqlgen returns without closing after a connection_init whose payload is
// not a JSON object.
func serveSocket(srv http.Handler, w http.ResponseWriter, r *http.Request) {
	h := &socketHolder{}
	srv.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), holderKey{}, h)))
	if h.s != nil {
		h.s.end(closeBadRequest, "connection_init must be a JSON object with an optional object payload")
	}
}

// sseKey marks the context of the requests of the SSE transport.
type sseKey struct{}

// liveTransports refuses a subscription sent on a transport that cannot
// carry it (a POST without Accept: text/event-stream, a GET): refused
// before execution, as a document that fails validation (422).
type liveTransports struct{}

var (
	_ graphql.HandlerExtension        = liveTransports{}
	_ graphql.OperationContextMutator = liveTransports{}
)

func (liveTransports) ExtensionName() string                   { return "LiveTransports" }
func (liveTransports) Validate(graphql.ExecutableSchema) error { return nil }

func (liveTransports) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if opCtx.Operation == nil || opCtx.Operation.Operation != ast.Subscription || overSocket(ctx) {
		return nil
	}
	if sse, _ := ctx.Value(sseKey{}).(bool); sse {
		return nil
	}
	return refusal(apperr.New(apperr.BadRequest, "a subscription needs a websocket (graphql-transport-ws) "+
		"or a POST with Accept: text/event-stream"))
}

// socketCharge charges each operation sent on a websocket to its key
// (Config.ChargeOperation): an operation over the budget is answered with
// the error instead of running.
type socketCharge struct {
	charge func(ctx context.Context) error
}

var (
	_ graphql.HandlerExtension     = socketCharge{}
	_ graphql.OperationInterceptor = socketCharge{}
)

func (socketCharge) ExtensionName() string                          { return "SocketCharge" }
func (socketCharge) Validate(schema graphql.ExecutableSchema) error { return nil }

func (c socketCharge) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if c.charge == nil || !overSocket(ctx) {
		return next(ctx)
	}
	if err := c.charge(ctx); err != nil {
		code, message := apperr.Internal, "internal error"
		if d := apperr.As(err); d != nil {
			code, message = d.Code, d.Message
		}
		// OneShot: the transport reads one response and completes.
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{{Message: message,
			Extensions: map[string]any{"code": string(code)}}}})
	}
	return next(ctx)
}
