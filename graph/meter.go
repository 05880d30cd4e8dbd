package graph

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/apperr"
)

// Long texts the response cap counts while the operation runs, by the
// GraphQL field that writes each. The lengths are a lower bound of the
// bytes written (JSON escaping only lengthens a string), so stopping once
// they pass the limit never refuses a response that would have fitted.
var (
	postTexts = map[string]func(*db.Post) int{
		"body": func(p *db.Post) int { return len(p.Body) },
		"raw":  func(p *db.Post) int { return len(p.Raw) },
	}
	briefTexts    = map[string]func(*db.Brief) int{"content": func(b *db.Brief) int { return len(b.Content) }}
	firehoseTexts = map[string]func(*db.FirehoseMessage) int{
		"body":      func(m *db.FirehoseMessage) int { return strLen(m.Body) },
		"summaryAi": func(m *db.FirehoseMessage) int { return strLen(m.SummaryAI) },
	}
)

func postID(p *db.Post) int64   { return p.ID }
func briefID(b *db.Brief) int64 { return b.ID }

func strLen(s *string) int {
	if s == nil {
		return 0
	}
	return len(*s)
}

// chargeItems counts the long texts of rows, the items of the connection
// the current field returns, that its nodes or edges select. Once the
// operation's texts pass its response cap it stops the operation (every
// resolver still running sees its context cancelled) and returns the
// error that operationGuard turns into the cap's message. Under
// pageBound (the REST queries), whose pages the store has already cut to
// the budget (readBudget), it only counts. Outside both it does nothing.
func chargeItems[T any](ctx context.Context, rows []T, texts map[string]func(*T) int) error {
	op, ok := ctx.Value(operationKey{}).(*operationState)
	if !ok || len(rows) == 0 {
		return nil
	}
	opCtx := graphql.GetOperationContext(ctx)
	var sel []string
	eachNodeSelection(opCtx, graphql.GetFieldContext(ctx).Field.Selections, func(set ast.SelectionSet) {
		sel = selectedTexts(opCtx, set, texts, sel)
	})
	return chargeRows(op, rows, texts, sel)
}

// chargeObject is chargeItems for a field that returns one object, of
// kind (a post, a brief) and id(obj). Under pageBound an object whose selected
// texts alone are over the budget is refused with the error of
// itemTooLarge.
func chargeObject[T any](ctx context.Context, kind string, id func(*T) int64, obj *T, texts map[string]func(*T) int) error {
	op, ok := ctx.Value(operationKey{}).(*operationState)
	if !ok || obj == nil {
		return nil
	}
	sel := selectedTexts(graphql.GetOperationContext(ctx), graphql.GetFieldContext(ctx).Field.Selections, texts, nil)
	if op.cut {
		n := int64(0)
		for _, name := range sel {
			n += int64(texts[name](obj))
		}
		if left := op.limit - op.text.Load(); n > left {
			return itemTooLarge(kind, &db.TooLargeError{ID: id(obj), Bytes: n, Max: left}, sel)
		}
	}
	return chargeRows(op, []T{*obj}, texts, sel)
}

// selectedTexts appends to sel the names of texts that set selects.
func selectedTexts[T any](opCtx *graphql.OperationContext, set ast.SelectionSet, texts map[string]func(*T) int, sel []string) []string {
	for _, f := range graphql.CollectFields(opCtx, set, nil) {
		if _, ok := texts[f.Name]; ok {
			sel = append(sel, f.Name)
		}
	}
	return sel
}

// chargeRows adds the lengths of the selected texts of rows to the
// operation's count, and stops the operation once it passes the limit.
func chargeRows[T any](op *operationState, rows []T, texts map[string]func(*T) int, sel []string) error {
	if len(sel) == 0 {
		return nil
	}
	n := 0
	for i := range rows {
		for _, name := range sel {
			n += texts[name](&rows[i])
		}
	}
	if op.text.Add(int64(n)) > op.limit && !op.cut {
		op.stop(errResponseTooLarge)
		return errResponseTooLarge
	}
	return nil
}

// readBudget returns the bytes of long texts the list being resolved may
// read, for the store to bound its read by (db.Page.MaxBytes,
// db.StreamRange.MaxBytes): what the operation's cap leaves of it (at
// least 1, so that a read past a spent budget is cut too); 0, no bound,
// outside operationGuard and pageBound.
func readBudget(ctx context.Context) int64 {
	op, ok := ctx.Value(operationKey{}).(*operationState)
	if !ok {
		return 0
	}
	return max(op.limit-op.text.Load(), 1)
}

// boundedRead checks the outcome of a list read bounded by readBudget:
// err, and whether the page holds fewer than limit rows although more
// follow (n rows, more), i.e. was cut for size. Under operationGuard a
// cut page or a first item over the budget means the response is over
// the cap: the operation stops with its error. Under pageBound a cut page
// is what the budget is for, and a first item over it is refused with
// itemTooLarge's error naming the fields of optional, as selected (sel),
// that make it so large. kind names the items ("post").
func boundedRead(ctx context.Context, err error, n, limit int, more bool, kind string, sel []string) error {
	op, ok := ctx.Value(operationKey{}).(*operationState)
	if !ok {
		return err
	}
	var tl *db.TooLargeError
	tooLarge := errors.As(err, &tl)
	switch {
	case tooLarge && op.cut:
		return itemTooLarge(kind, tl, sel)
	case tooLarge, !op.cut && err == nil && more && n < limit:
		op.stop(errResponseTooLarge)
		return errResponseTooLarge
	}
	return err
}

// ItemTooLargeError is the cause of the bad_request with which a REST
// read refuses an item whose long texts alone are over the page budget.
type ItemTooLargeError struct {
	Kind  string // "post", "firehose message", "brief"
	ID    int64
	Bytes int64 // the bytes of its long texts
	Max   int64 // the budget
	// Fields are the fields (GraphQL names) of the long texts that were
	// asked for and counted: for a list, the optional ones in the order
	// of the model's optional columns (the usually largest first); for a
	// single item, in the order of the selection.
	Fields []string
}

func (e *ItemTooLargeError) Error() string {
	return fmt.Sprintf("%s %d has %d bytes of long texts, more than the %d a page may hold", e.Kind, e.ID, e.Bytes, e.Max)
}

// itemTooLarge returns the bad_request for an item of kind too large to be
// served whole: tl says by how much, sel which fields were asked for.
func itemTooLarge(kind string, tl *db.TooLargeError, sel []string) error {
	e := &ItemTooLargeError{Kind: kind, ID: tl.ID, Bytes: tl.Bytes, Max: tl.Max, Fields: sel}
	msg := fmt.Sprintf("%s %d is too large to be served whole: %d bytes of text, more than the %d bytes a response may hold",
		kind, tl.ID, tl.Bytes, tl.Max)
	if len(sel) > 0 {
		msg += "; ask for it without " + strings.Join(sel, " or ")
	}
	return &apperr.Error{Code: apperr.BadRequest, Message: msg, Err: e}
}

// pageBound is the extension of the executors that run the REST layer's
// fixed queries (NewExecutor, ConfigureExecutor): it gives each operation
// the budget of Limits.MaxPageBytes for the long texts it reads. A list
// read ends early within it (readBudget, boundedRead), with a cursor that
// goes on from its last item, and an item alone over it is refused with a
// bad_request; a response is thus never cut and never larger than the
// budget plus the short fields of its items.
type pageBound struct{ maxBytes int }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
} = pageBound{}

func (pageBound) ExtensionName() string                   { return "PageBound" }
func (pageBound) Validate(graphql.ExecutableSchema) error { return nil }

func (b pageBound) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	op := &operationState{limit: int64(b.maxBytes), cut: true}
	ctx, op.stop = context.WithCancelCause(context.WithValue(ctx, operationKey{}, op))
	h := next(ctx)
	return func(rctx context.Context) *graphql.Response {
		resp := h(rctx)
		if resp == nil || resp.HasNext == nil || !*resp.HasNext {
			op.stop(nil)
		}
		return resp
	}
}
