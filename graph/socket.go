package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/gobwas/ws"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/graph/live"
)

// The websocket transport of /graphql: the graphql-transport-ws protocol
// over gobwas/ws, added to gqlgen's server as a transport of its own
// (handler.Server.AddTransport, its supported extension point), so that a
// socket costs one goroutine, blocked in a read of its connection, and no
// buffer while it is idle: a subscription is a member of a live feed
// (graph/live) whose pages the feed's writers render with the operation's
// own selection (gqlgen's response handler, called in their goroutine) and
// write without blocking, like the SSE streams. A socket's writes that the
// kernel does not take at once are written by a goroutine that exists only
// while the socket is behind, and meanwhile its subscriptions skip the
// feeds' rounds, catching up afterwards.
//
// Every entry point keeps the limits of a request: connection_init within
// InitTimeout, its key checked like a request's (refusals closed with the
// protocol's codes), every operation charged to the key's rate limit and
// its body bounded like a POST's, the key's open-feed slots for its
// subscriptions, revocation and shutdown closing the socket, and a client
// that answers none of the pings of three heartbeats taken for gone.

// Close codes of graphql-transport-ws and RFC 6455 that feedapi sends.
const (
	closeNormal         = 1000
	closeGoingAway      = 1001 // the server shuts down
	closeUnsupported    = 1003 // a binary message
	closePolicy         = 1008 // the client read too slowly
	closeTooLarge       = 1009 // a message over the body limit
	closeTryAgain       = 1013 // the key could not be checked
	closeBadRequest     = 4400 // a message that is not one of the protocol's
	closeUnauthorized   = 4401 // no key, an unknown or a revoked one; an operation before the ack
	closeForbidden      = 4403 // a key whose tier may not use /graphql
	closeSubprotocol    = 4406 // a client that does not speak graphql-transport-ws
	closeInitTimeout    = 4408 // no connection_init in time
	closeDuplicateID    = 4409 // an operation id already running
	closeTooMany        = 4429 // the key's rate limit is spent; a second connection_init
	graphqlTransportWS  = "graphql-transport-ws"
	maxCloseReasonBytes = 123
)

// InitTimeout is how long a websocket may take to send connection_init
// after its upgrade: a socket that does not is closed.
const InitTimeout = 5 * time.Second

// socketKey marks the context of a websocket's operations.
type socketKey struct{}

// overSocket reports whether ctx is an operation's on a websocket.
func overSocket(ctx context.Context) bool {
	_, ok := ctx.Value(socketKey{}).(*socketOp)
	return ok
}

// socketOpOf returns the websocket operation of ctx, or nil.
func socketOpOf(ctx context.Context) *socketOp {
	op, _ := ctx.Value(socketKey{}).(*socketOp)
	return op
}

// socketTransport is the transport.
type socketTransport struct {
	live      *live.Live                                // nil: sockets are not tracked, subscriptions refused
	context   func(ctx context.Context) context.Context // Config.SocketContext
	check     func(ctx context.Context, payload map[string]any) (context.Context, error)
	charge    func(ctx context.Context) error
	readLimit int64
	heartbeat time.Duration
	cfg       live.Config
	log       *slog.Logger
}

var _ graphql.Transport = socketTransport{}

func (socketTransport) Supports(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

func (t socketTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if !sameOrigin(r) {
		refuse(w, http.StatusForbidden, "a websocket from a page of another origin is refused")
		return
	}
	spoken := false
	upgrader := ws.HTTPUpgrader{Timeout: t.cfg.SlowWrite, Protocol: func(p string) bool {
		if p == graphqlTransportWS {
			spoken = true
		}
		return spoken
	}}
	conn, rw, _, err := upgrader.Upgrade(r, w)
	if err != nil {
		return // the upgrader answered the request
	}
	// Bytes the client sent right after its upgrade request are read
	// first; net/http's buffers go with the handshake.
	var in io.Reader = conn
	if n := rw.Reader.Buffered(); n > 0 {
		early, _ := rw.Reader.Peek(n)
		in = io.MultiReader(bytes.NewReader(bytes.Clone(early)), conn)
	}
	s := &socket{t: &t, conn: conn, in: in, w: live.NewWriter(conn), exec: exec}
	// The socket's context holds what its operations need of the upgrade
	// request (its key, its request id), not the request: the request
	// holds its connection's buffers, which an idle socket must not.
	s.ctx, s.cancel = context.WithCancel(t.socketContext(r.Context()))
	if !spoken {
		s.end(closeSubprotocol, "the subprotocol must be "+graphqlTransportWS)
		return
	}
	// The socket goes on in a goroutine of its own, and this one (with
	// net/http's for the connection, and the request) ends.
	go s.serve()
}

// socketContext is the context a socket starts from, made from its
// upgrade request's.
func (t socketTransport) socketContext(ctx context.Context) context.Context {
	if t.context != nil {
		return t.context(ctx)
	}
	out := context.Background()
	if p, ok := keys.FromContext(ctx); ok {
		out = keys.WithPrincipal(out, p)
	}
	return out
}

// sameOrigin reports whether a browser's request comes from a page of the
// API's own origin (or from no browser page at all).
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

// socket is one websocket connection.
type socket struct {
	t      *socketTransport
	conn   net.Conn
	in     io.Reader
	w      live.Writer
	exec   graphql.GraphExecutor
	ctx    context.Context // the connection's: its key once acknowledged; cancelled when it ends
	cancel context.CancelFunc

	lastRead atomic.Int64 // unix nanoseconds of the last frame read

	mu       sync.Mutex
	acked    bool
	ops      []*socketOp // running, in the order they started (a socket runs a few)
	pending  []byte      // written by the drain goroutine
	draining bool        // a drain goroutine runs
	waiting  []func()    // called once the drain has written everything
	closing  bool
	release  []func() // what the socket holds once acknowledged
	ping     *time.Timer
}

// socketOp is one operation of a socket (a subscribe message).
type socketOp struct {
	s         *socket
	id        string
	ctx       context.Context // holds the operation (socketKey); ends with the socket
	responses graphql.ResponseHandler
	start     func() // delivers a subscription's first page, once responses is set

	mu      sync.Mutex
	stop    func() // ends the operation: a query's cancel, a subscription's leaving its feed
	stopped bool
}

// onStop sets what ends the operation, and runs it at once if the
// operation has ended already.
func (op *socketOp) onStop(stop func()) {
	op.mu.Lock()
	stopped := op.stopped
	if !stopped {
		op.stop = stop
	}
	op.mu.Unlock()
	if stopped {
		stop()
	}
}

// end ends the operation, once: the client completed it, or the socket
// ends.
func (op *socketOp) end() {
	op.mu.Lock()
	stop := op.stop
	already := op.stopped
	op.stopped = true
	op.mu.Unlock()
	if stop != nil && !already {
		stop()
	}
}

// op returns the running operation id, or nil. s.mu is held.
func (s *socket) op(id string) *socketOp {
	for _, op := range s.ops {
		if op.id == id {
			return op
		}
	}
	return nil
}

// serve reads the socket's messages until it ends. It handles each in a
// goroutine of its own and waits for it: the work of a message (a key
// check, an operation's first read) needs a deep stack, which an idle
// socket, blocked in a read, then does not keep.
func (s *socket) serve() {
	defer s.end(closeNormal, "")
	_ = s.conn.SetReadDeadline(time.Now().Add(InitTimeout))
	for {
		msg, err := s.readMessage()
		if err != nil {
			var ne net.Error
			s.mu.Lock()
			acked := s.acked
			s.mu.Unlock()
			switch {
			case errors.As(err, &ne) && ne.Timeout() && !acked:
				s.close(closeInitTimeout, "connection initialisation timeout")
			case errors.Is(err, errMessageTooLarge):
				s.close(closeTooLarge, "a message is larger than the limit")
			case errors.Is(err, errBinaryMessage):
				s.close(closeUnsupported, "messages are text (JSON)")
			}
			return
		}
		if msg == nil {
			continue // a control frame
		}
		if !apart(func() bool { return s.handle(msg) }) {
			return
		}
	}
}

// handle handles one message of the protocol; false: the socket closes.
func (s *socket) handle(msg []byte) bool {
	var m struct {
		Type    string          `json:"type"`
		ID      string          `json:"id"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(msg, &m); err != nil || m.Type == "" {
		s.close(closeBadRequest, "a message must be a JSON object with a type")
		return false
	}
	s.mu.Lock()
	acked := s.acked
	s.mu.Unlock()
	switch m.Type {
	case "connection_init":
		if acked {
			s.close(closeTooMany, "too many initialisation requests")
			return false
		}
		if !s.init(m.Payload) {
			return false
		}
		_ = s.conn.SetReadDeadline(time.Now().Add(3 * s.t.heartbeat))
	case "ping":
		s.send(protocolMessage("pong", "", nil))
	case "pong":
	case "subscribe":
		if !acked {
			s.close(closeUnauthorized, "unauthorized")
			return false
		}
		if m.ID == "" {
			s.close(closeBadRequest, "subscribe needs an id")
			return false
		}
		return s.subscribe(m.ID, m.Payload)
	case "complete":
		s.mu.Lock()
		op := s.op(m.ID)
		s.mu.Unlock()
		if op != nil {
			op.end()
		}
	default:
		s.close(closeBadRequest, "unknown message type "+truncateUTF8(m.Type, 40))
		return false
	}
	return true
}

// apart runs f in a goroutine of its own and returns its result.
func apart(f func() bool) bool {
	done := make(chan bool, 1)
	go func() { done <- f() }()
	return <-done
}

var (
	errMessageTooLarge = errors.New("message too large")
	errBinaryMessage   = errors.New("binary message")
)

// readMessage reads the next frame and returns a whole text message, or
// nil for a control frame (answered here: a ping with its pong, a close
// with its close). After an acknowledged init every frame moves the read
// deadline three heartbeats on: the server pings every heartbeat, so a
// client that answers none of three is gone.
func (s *socket) readMessage() ([]byte, error) {
	var msg []byte
	for {
		h, err := ws.ReadHeader(s.in)
		if err != nil {
			return nil, err
		}
		if h.Length > s.t.readLimit || int64(len(msg))+h.Length > s.t.readLimit {
			return nil, errMessageTooLarge
		}
		payload := make([]byte, h.Length)
		if _, err := io.ReadFull(s.in, payload); err != nil {
			return nil, err
		}
		if h.Masked {
			ws.Cipher(payload, h.Mask, 0)
		}
		s.lastRead.Store(time.Now().UnixNano())
		s.mu.Lock()
		if s.acked {
			_ = s.conn.SetReadDeadline(time.Now().Add(3 * s.t.heartbeat))
		}
		s.mu.Unlock()
		switch h.OpCode {
		case ws.OpPing:
			s.send(frame(ws.OpPong, payload))
			return nil, nil
		case ws.OpPong:
			return nil, nil
		case ws.OpClose:
			s.close(closeNormal, "")
			return nil, io.EOF
		case ws.OpBinary:
			return nil, errBinaryMessage
		case ws.OpText, ws.OpContinuation:
			msg = append(msg, payload...)
			if h.Fin {
				return msg, nil
			}
		}
	}
}

// init checks connection_init's key (Config.WebsocketInit): a refusal
// closes the socket with its code and the error's message; an accepted
// socket is acknowledged, registered with the live feeds (closed when its
// key is revoked or the server shuts down) and pinged every heartbeat.
func (s *socket) init(raw json.RawMessage) bool {
	t := s.t
	payload := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &payload); err != nil {
			s.close(closeBadRequest, "connection_init's payload must be a JSON object")
			return false
		}
	}
	ctx := s.ctx
	if t.check != nil {
		next, err := t.check(ctx, payload)
		if err != nil {
			s.close(initRefusal(err))
			return false
		}
		ctx = next
	}
	var hold []func()
	if t.live != nil {
		done, err := t.live.Track(func() { s.end(closeGoingAway, live.EndShutdown.Message+"; reconnect") })
		if err != nil {
			s.close(closeGoingAway, live.EndShutdown.Message+"; reconnect")
			return false
		}
		hold = append(hold, done)
		if p, ok := keys.FromContext(ctx); ok {
			hold = append(hold, t.live.Watch(p.KeyID, func(e live.End) { s.end(closeUnauthorized, e.Message) }))
		}
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		for _, f := range hold {
			f()
		}
		return false
	}
	s.acked = true
	s.ctx = ctx
	s.release = hold
	s.ping = time.AfterFunc(t.heartbeat, s.beat)
	s.mu.Unlock()
	s.send(protocolMessage("connection_ack", "", nil))
	return true
}

// beat pings the client, and re-arms itself.
func (s *socket) beat() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return
	}
	s.sendLocked(frame(ws.OpPing, nil))
	s.ping.Reset(s.t.heartbeat)
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
	return code, d.Message
}

// subscribe runs one operation: charged to the key, refused with an error
// message when it cannot run; a query answers once and completes, a
// subscription joins its feed (subscribe.go) and starts once its response
// handler is known. It reports false when the socket must close.
func (s *socket) subscribe(id string, raw json.RawMessage) bool {
	s.mu.Lock()
	if s.op(id) != nil {
		s.mu.Unlock()
		s.close(closeDuplicateID, "subscriber for "+truncateUTF8(id, 80)+" already exists")
		return false
	}
	op := &socketOp{s: s, id: id}
	op.ctx = context.WithValue(s.ctx, socketKey{}, op)
	s.ops = append(s.ops, op)
	s.mu.Unlock()
	fail := func(errs ...*gqlerror.Error) bool {
		s.send(protocolMessage("error", id, errs))
		op.done()
		return true
	}
	if s.t.charge != nil {
		if err := s.t.charge(op.ctx); err != nil {
			return fail(presented(err))
		}
	}
	params := &graphql.RawParams{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(params); err != nil || params.Query == "" {
		return fail(&gqlerror.Error{Message: "subscribe's payload must hold a string query, and optionally operationName, variables and extensions",
			Extensions: map[string]any{"code": string(apperr.BadRequest)}})
	}
	ctx := graphql.StartOperationTrace(op.ctx)
	rc, errs := s.exec.CreateOperationContext(ctx, params)
	if errs != nil {
		resp := s.exec.DispatchError(graphql.WithOperationContext(ctx, rc), errs)
		return fail(resp.Errors...)
	}
	responses, ctx := s.exec.DispatchOperation(ctx, rc)
	if rc.Operation.Operation != ast.Subscription || op.start == nil {
		// A query (or a subscription refused before it joined a feed):
		// its answer, then complete, in a goroutine of its own so that the
		// socket goes on reading; the client's complete cancels it.
		ctx, cancel := context.WithCancel(ctx)
		op.onStop(cancel)
		go func() {
			defer cancel()
			if resp := responses(ctx); resp != nil {
				s.send(frame(ws.OpText, responseMessage(id, resp)))
			}
			s.send(protocolMessage("complete", id, nil))
			op.done()
		}()
		return true
	}
	op.responses = responses
	op.ctx = ctx
	op.start()
	return true
}

// done ends the operation and removes it from the socket's operations.
func (op *socketOp) done() {
	op.end()
	op.remove()
}

// remove takes the operation, which has ended, off the socket's
// operations.
func (op *socketOp) remove() {
	op.mu.Lock()
	op.stopped = true
	op.mu.Unlock()
	s := op.s
	s.mu.Lock()
	if i := slices.Index(s.ops, op); i >= 0 {
		s.ops = slices.Delete(s.ops, i, i+1)
	}
	s.mu.Unlock()
}

// send writes b without blocking the caller, behind what the socket has
// not written yet.
func (s *socket) send(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sendLocked(b)
}

// deliver writes frames, and reports whether they were all written at
// once; if not, ready is called once the drain has written them.
func (s *socket) deliver(frames []byte, ready func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	if s.sendLocked(frames) {
		return true
	}
	s.waiting = append(s.waiting, ready)
	return false
}

// sendLocked writes b at once as far as the kernel takes it and leaves the
// rest to the drain goroutine; it reports whether b was written whole.
func (s *socket) sendLocked(b []byte) bool {
	if s.closing {
		return false
	}
	if s.draining {
		s.pending = append(s.pending, b...)
		return false
	}
	n, err := s.w.TryWrite(b)
	if err != nil {
		s.closing = true
		_ = s.conn.Close()
		return false
	}
	if n == len(b) {
		return true
	}
	s.pending = append(s.pending[:0], b[n:]...)
	s.draining = true
	go s.drain(time.Now())
	return false
}

// drain writes what the kernel did not take, blocking, until nothing is
// left; then the subscriptions that waited for it go on. A client that
// took longer than the slow-write limit is closed (1008): it reads too
// slowly; one stuck longer than the stuck-write limit is cut.
func (s *socket) drain(start time.Time) {
	cfg := s.t.cfg
	for {
		s.mu.Lock()
		b := s.pending
		s.pending = nil
		if len(b) == 0 {
			s.draining = false
			waiting := s.waiting
			s.waiting = nil
			s.mu.Unlock()
			if time.Since(start) > cfg.SlowWrite {
				s.end(closePolicy, live.EndSlowReader.Message+"; reconnect")
				return
			}
			for _, ready := range waiting {
				ready()
			}
			return
		}
		s.mu.Unlock()
		_ = s.conn.SetWriteDeadline(start.Add(cfg.StuckWrite()))
		if _, err := s.conn.Write(b); err != nil {
			s.end(closeNormal, "")
			return
		}
		_ = s.conn.SetWriteDeadline(time.Time{})
	}
}

// close sends a close frame with code and reason and ends the socket.
func (s *socket) close(code int, reason string) { s.end(code, reason) }

// end ends the socket, once: its operations end, it gives back what it
// holds, and its connection closes after a close frame with code and
// reason (written without waiting: a client that does not read does not
// get it).
func (s *socket) end(code int, reason string) {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return
	}
	if code != 0 {
		body := ws.NewCloseFrameBody(ws.StatusCode(code), truncateUTF8(reason, maxCloseReasonBytes))
		if !s.draining {
			_, _ = s.w.TryWrite(frame(ws.OpClose, body))
		}
	}
	s.closing = true
	release := s.release
	s.release = nil
	ops := slices.Clone(s.ops)
	if s.ping != nil {
		s.ping.Stop()
	}
	// Subscriptions that waited for the drain leave with their context.
	s.waiting = nil
	s.mu.Unlock()
	for _, op := range ops {
		op.end()
	}
	s.cancel()
	_ = s.conn.Close()
	for _, f := range release {
		f()
	}
}

// frame is a websocket frame of op with payload, unmasked (the server's).
func frame(op ws.OpCode, payload []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(payload) + 10)
	_ = ws.WriteHeader(&buf, ws.Header{Fin: true, OpCode: op, Length: int64(len(payload))})
	buf.Write(payload)
	return buf.Bytes()
}

// protocolMessage is a graphql-transport-ws message as a text frame.
func protocolMessage(typ, id string, payload any) []byte {
	m := struct {
		ID      string `json:"id,omitempty"`
		Type    string `json:"type"`
		Payload any    `json:"payload,omitempty"`
	}{id, typ, payload}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // errors and responses always marshal
	}
	return frame(ws.OpText, b)
}

// responseMessage is a next message of operation id with resp, not yet
// framed.
func responseMessage(id string, resp *graphql.Response) []byte {
	var b bytes.Buffer
	b.WriteString(`{"id":`)
	idJSON, _ := json.Marshal(id)
	b.Write(idJSON)
	b.WriteString(`,"type":"next","payload":`)
	writeJSON(&b, resp)
	b.WriteString("}")
	return b.Bytes()
}

// presented is err as the error presenter would show it: its domain code
// and message, or internal.
func presented(err error) *gqlerror.Error {
	code, message := apperr.Internal, "internal error"
	if d := apperr.As(err); d != nil && d.Code != apperr.Internal {
		code, message = d.Code, d.Message
	}
	return &gqlerror.Error{Message: message, Extensions: map[string]any{"code": string(code)}}
}

// truncateUTF8 shortens s to at most n bytes, on a rune boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
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
