package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/feedapi/feedapi/db"
)

// Long texts the response cap counts while the operation runs, by the
// GraphQL field that writes each. The lengths are a lower bound of the
// bytes written (JSON escaping only lengthens a string), so stopping once
// they pass the limit never refuses a response that would have fitted.
var (
	postTexts     = map[string]func(*db.Post) int{"body": func(p *db.Post) int { return len(p.Body) }}
	briefTexts    = map[string]func(*db.Brief) int{"content": func(b *db.Brief) int { return len(b.Content) }}
	firehoseTexts = map[string]func(*db.FirehoseMessage) int{
		"body":      func(m *db.FirehoseMessage) int { return strLen(m.Body) },
		"summaryAi": func(m *db.FirehoseMessage) int { return strLen(m.SummaryAI) },
	}
)

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
// error that operationGuard turns into the cap's message. Outside
// operationGuard (the REST queries) it does nothing.
func chargeItems[T any](ctx context.Context, rows []T, texts map[string]func(*T) int) error {
	op, ok := ctx.Value(operationKey{}).(*operationState)
	if !ok || len(rows) == 0 {
		return nil
	}
	opCtx := graphql.GetOperationContext(ctx)
	var sel []string
	for _, f := range graphql.CollectFields(opCtx, graphql.GetFieldContext(ctx).Field.Selections, nil) {
		switch f.Name {
		case "nodes":
			sel = selectedTexts(opCtx, f.Selections, texts, sel)
		case "edges":
			for _, g := range graphql.CollectFields(opCtx, f.Selections, nil) {
				if g.Name == "node" {
					sel = selectedTexts(opCtx, g.Selections, texts, sel)
				}
			}
		}
	}
	return chargeRows(op, rows, texts, sel)
}

// chargeObject is chargeItems for a field that returns one object.
func chargeObject[T any](ctx context.Context, obj *T, texts map[string]func(*T) int) error {
	op, ok := ctx.Value(operationKey{}).(*operationState)
	if !ok || obj == nil {
		return nil
	}
	sel := selectedTexts(graphql.GetOperationContext(ctx), graphql.GetFieldContext(ctx).Field.Selections, texts, nil)
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
	if op.text.Add(int64(n)) > op.limit {
		op.stop(errResponseTooLarge)
		return errResponseTooLarge
	}
	return nil
}
