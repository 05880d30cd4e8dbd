package graph

import (
	"context"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Columns a list may leave unread, by the GraphQL field that shows each:
// the long ones, which a selection often does without (REST's include_raw
// and include_summary default to false). Every other column is always
// read, whatever the selection, so that a column added to a model (and its
// field) needs nothing here.
var (
	postOptional     = []optionalColumn{{"raw", "raw"}, {"body", "body"}}
	firehoseOptional = []optionalColumn{{"summaryAi", "summary_ai"}, {"body", "body"}}
	briefOptional    = []optionalColumn{{"content", "content"}}
)

// selectedOptional returns the fields of optional whose columns omit does
// not name: those a list reads, in optional's order.
func selectedOptional(optional []optionalColumn, omit []string) []string {
	var out []string
	for _, o := range optional {
		if !slices.Contains(omit, o.column) {
			out = append(out, o.field)
		}
	}
	return out
}

// optionalColumn is a column that is read only when its field is shown.
type optionalColumn struct{ field, column string }

// unselectedColumns returns the optional columns whose fields the
// connection being resolved selects neither in nodes nor in edges.node
// (fragments, @include/@skip and @defer taken into account), for the store
// to leave out.
func unselectedColumns(ctx context.Context, optional []optionalColumn) []string {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || !graphql.HasOperationContext(ctx) {
		return nil
	}
	opCtx := graphql.GetOperationContext(ctx)
	shown := make([]bool, len(optional))
	mark := func(set ast.SelectionSet) {
		for _, f := range graphql.CollectFields(opCtx, set, nil) {
			for i, o := range optional {
				if f.Name == o.field {
					shown[i] = true
				}
			}
		}
	}
	eachNodeSelection(opCtx, fc.Field.Selections, mark)
	var omit []string
	for i, o := range optional {
		if !shown[i] {
			omit = append(omit, o.column)
		}
	}
	return omit
}

// eachNodeSelection calls f with each selection set that a connection's
// selection (set) asks of its nodes: in nodes and in edges.node, fragments
// and @include/@skip taken into account.
func eachNodeSelection(opCtx *graphql.OperationContext, set ast.SelectionSet, f func(ast.SelectionSet)) {
	for _, c := range graphql.CollectFields(opCtx, set, nil) {
		switch c.Name {
		case "nodes":
			f(c.Selections)
		case "edges":
			for _, e := range graphql.CollectFields(opCtx, c.Selections, nil) {
				if e.Name == "node" {
					f(e.Selections)
				}
			}
		}
	}
}
