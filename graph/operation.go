package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/feedapi/feedapi/graph/apperr"
)

type requestIDKey struct{}

// WithRequestID returns ctx carrying the id of the HTTP request it serves,
// which the /graphql handler's error log lines report as request_id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// requestID returns the id of WithRequestID, or "".
func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// errResponseTooLarge is the cause with which operationGuard cancels an
// operation whose response went over Limits.MaxResponseBytes.
var errResponseTooLarge = errors.New("graph: response over the size limit")

// maxLoggedPaths bounds the paths one log line lists.
const maxLoggedPaths = 20

// operationGuard is the /graphql handler's extension that sees an
// operation through: it caps the size of its response and logs its
// internal errors once.
//
// Response size: the bytes of data of every payload of the operation (the
// first and, with @defer over a streaming transport, each later one) are
// added up; a payload that takes the sum over maxBytes is replaced by one
// bad_request error naming the limit, with no data, and ends the
// operation: its context is cancelled, so deferred work still running
// stops and sends nothing more. A response is never truncated. While the
// operation runs, its resolvers count the long texts they load
// (chargeItems); once those alone pass maxBytes the operation is stopped
// the same way, before the rest of its SQL runs and its body is built.
//
// Errors: the error presenter hands internal errors to the operation's
// record instead of logging each one (one alias timing out would otherwise
// log a line per alias); at the end of each payload the record is written
// as one line with the request id, the operation's name, the paths and
// the first error. An error that only says the client went away (its
// request's context was cancelled) is no fault of the server: it is
// logged at debug level, and shown to nobody, since nobody reads it.
type operationGuard struct {
	log      *slog.Logger
	maxBytes int
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
} = operationGuard{}

func (operationGuard) ExtensionName() string                   { return "OperationGuard" }
func (operationGuard) Validate(graphql.ExecutableSchema) error { return nil }

func (g operationGuard) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	op := &operationState{limit: int64(g.maxBytes)}
	ctx, op.stop = context.WithCancelCause(context.WithValue(ctx, operationKey{}, op))
	h := next(ctx)
	// A subscription's events are separate responses: each is capped on
	// its own, and the operation ends when the subscription does.
	sub := graphql.HasOperationContext(ctx) && graphql.GetOperationContext(ctx).Operation != nil &&
		graphql.GetOperationContext(ctx).Operation.Operation == ast.Subscription
	var sent int
	done := false
	return func(rctx context.Context) *graphql.Response {
		if done {
			return nil
		}
		resp := h(rctx)
		if sub && resp != nil {
			sent = 0
		}
		if resp != nil {
			sent += len(resp.Data)
			if sent > g.maxBytes || errors.Is(context.Cause(ctx), errResponseTooLarge) {
				op.stop(errResponseTooLarge)
				resp = &graphql.Response{Errors: gqlerror.List{{
					Message:    fmt.Sprintf("the response is larger than the limit of %d bytes; ask for fewer items or fields", g.maxBytes),
					Extensions: map[string]any{"code": string(apperr.BadRequest)},
				}}}
			}
		}
		if resp == nil || !sub && (resp.HasNext == nil || !*resp.HasNext) {
			done = true
			op.stop(nil)
		}
		op.errors.flush(rctx, g.log)
		return resp
	}
}

// operationState is what operationGuard keeps of an operation in its
// context.
type operationState struct {
	errors errorRecord
	// text counts the bytes of the long texts the resolvers have loaded
	// for the response so far: a lower bound of its size, since JSON only
	// adds to a string. Past limit the operation stops.
	text  atomic.Int64
	limit int64
	// cut is set by pageBound: a list read past limit ends early instead
	// of stopping the operation.
	cut  bool
	stop context.CancelCauseFunc
}

type operationKey struct{}

// errorRecord collects the internal errors of one operation for one log line.
type errorRecord struct {
	mu         sync.Mutex
	count      int // errors that are the server's fault
	clientGone int // errors that only say the client went away
	paths      []string
	first      error
}

// recordFrom returns the record of the operation ctx belongs to, or nil
// outside an operationGuard.
func recordFrom(ctx context.Context) *errorRecord {
	if op, ok := ctx.Value(operationKey{}).(*operationState); ok && !op.cut {
		return &op.errors
	}
	return nil
}

// add records err, an internal error at path.
func (r *errorRecord) add(ctx context.Context, path ast.Path, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case errors.Is(context.Cause(ctx), errResponseTooLarge):
		// Work stopped by the size limit: the client gets that error instead.
		return
	case clientGone(ctx):
		r.clientGone++
		return
	}
	r.count++
	if r.first == nil {
		r.first = err
	}
	if len(r.paths) < maxLoggedPaths {
		r.paths = append(r.paths, path.String())
	}
}

// flush writes what was recorded since the last flush as one line.
func (r *errorRecord) flush(ctx context.Context, log *slog.Logger) {
	r.mu.Lock()
	count, gone, paths, first := r.count, r.clientGone, r.paths, r.first
	r.count, r.clientGone, r.paths, r.first = 0, 0, nil, nil
	r.mu.Unlock()
	if count > 0 {
		path := ""
		if len(paths) > 0 {
			path = paths[0]
		}
		attrs := []slog.Attr{
			slog.String("request_id", requestID(ctx)),
			slog.String("operation", operationName(ctx)),
			slog.String("path", path),
			slog.Int("errors", count),
			slog.Any("paths", paths),
			slog.Any("error", first),
		}
		if pe := (*panicError)(nil); errors.As(first, &pe) {
			attrs = append(attrs, slog.String("stack", pe.stack))
		}
		log.LogAttrs(ctx, slog.LevelError, "graphql: internal error", attrs...)
	}
	if gone > 0 {
		log.LogAttrs(ctx, slog.LevelDebug, "graphql: client went away",
			slog.String("request_id", requestID(ctx)),
			slog.String("operation", operationName(ctx)),
			slog.Int("errors", gone))
	}
}

// clientGone reports whether the client closed its connection: the
// request's context was cancelled, neither timed out nor cancelled by the
// server for a reason of its own. Whatever error the work then ends with
// (context.Canceled, or the driver's word for an interrupted statement)
// is its consequence.
func clientGone(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled)
}

// operationName returns the name of the operation ctx belongs to, or ""
// for an anonymous one.
func operationName(ctx context.Context) string {
	if !graphql.HasOperationContext(ctx) {
		return ""
	}
	opCtx := graphql.GetOperationContext(ctx)
	if opCtx.Operation != nil && opCtx.Operation.Name != "" {
		return opCtx.Operation.Name
	}
	return opCtx.OperationName
}
