package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/apperr"
)

// protocolCodes are gqlgen's codes for documents refused before execution
// (the complexity limit's refusals carry the validation code: see
// complexityLimit): the client's fault, shown as bad_request with gqlgen's
// message.
var protocolCodes = map[string]bool{
	errcode.ParseFailed:      true,
	errcode.ValidationFailed: true,
}

// errorPresenter shows domain errors (apperr) as they are, with
// extensions.code and extensions.param; documents refused by the parser,
// the validator or the complexity limit as bad_request (naming the argument
// or variable refused, when there is one); and anything else as
// "internal error". Internal errors go to the operation's errorRecord,
// which operationGuard logs once; outside one (an executor without it)
// each is logged here, with the request id, the operation and the path.
func errorPresenter(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		var gqlErr *gqlerror.Error
		if !errors.As(err, &gqlErr) {
			gqlErr = gqlerror.WrapPath(graphql.GetPath(ctx), err)
		}
		out := &gqlerror.Error{Path: gqlErr.Path, Locations: gqlErr.Locations, Rule: gqlErr.Rule}
		if ae := apperr.As(err); ae != nil && ae.Code != apperr.Internal {
			out.Message = ae.Message
			out.Extensions = map[string]any{"code": string(ae.Code)}
			if ae.Param != "" {
				out.Extensions["param"] = ae.Param
			}
			return out
		}
		if code, _ := gqlErr.Extensions["code"].(string); gqlErr.Err == nil && protocolCodes[code] {
			out.Message = gqlErr.Message
			out.Extensions = map[string]any{"code": string(apperr.BadRequest)}
			// The argument of a refused literal (validationRules), or the
			// variable that the validator could not coerce.
			if param, _ := gqlErr.Extensions["param"].(string); param != "" {
				out.Extensions["param"] = param
			} else if len(gqlErr.Path) >= 2 && gqlErr.Path[0] == ast.PathName("variable") {
				if name, ok := gqlErr.Path[1].(ast.PathName); ok {
					out.Extensions["param"] = string(name)
				}
			}
			return out
		}
		if rec := recordFrom(ctx); rec != nil {
			rec.add(ctx, gqlErr.Path, err)
		} else {
			rec := &errorRecord{}
			rec.add(ctx, gqlErr.Path, err)
			rec.flush(ctx, log)
		}
		out.Message = "internal error"
		out.Extensions = map[string]any{"code": string(apperr.Internal)}
		return out
	}
}

// panicError is a resolver's recovered panic, with the stack where it
// happened, for the log line of the operation's internal errors.
type panicError struct {
	value any
	stack string
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// recoverFunc turns a resolver's panic into an error that the presenter
// shows as internal and logs, with its stack, in the operation's line.
func recoverFunc(ctx context.Context, p any) error {
	return &panicError{value: p, stack: string(debug.Stack())}
}

// storeErr maps the store's sentinel errors to domain errors.
func storeErr(err error, kind string, id int64) error {
	if errors.Is(err, db.ErrNotFound) {
		return apperr.Missing(kind, id)
	}
	return err
}
