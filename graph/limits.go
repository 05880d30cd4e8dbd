package graph

import (
	"context"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/graph/limits"
)

// Page sizes of the connections and of the ETF lists (graph/limits
// declares them for REST and GraphQL alike).
const (
	defaultPageSize = limits.PageDefault
	maxPageSize     = limits.PageMax
	defaultEtfSize  = limits.EtfPageDefault
	maxEtfSize      = limits.EtfPageMax
)

// refusal makes the error an extension returns for a refused operation; the
// error presenter shows it with its apperr code. It carries gqlgen's code for
// a failed validation, which its HTTP transports answer 422 (400 under
// application/graphql-response+json), as they answer a document that fails
// validation: nothing was executed.
func refusal(err *apperr.Error) *gqlerror.Error {
	e := &gqlerror.Error{Message: err.Message, Err: err}
	errcode.Set(e, errcode.ValidationFailed)
	return e
}

// complexityLimit is gqlgen's complexity limit whose refusals carry the code
// of a failed validation, like every other refusal before execution (see
// refusal); gqlgen's own code would make its transports answer 200.
type complexityLimit struct{ *extension.ComplexityLimit }

func (c complexityLimit) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	err := c.ComplexityLimit.MutateOperationContext(ctx, opCtx)
	if err != nil {
		errcode.Set(err, errcode.ValidationFailed)
	}
	return err
}

// depthLimit refuses operations whose fields nest deeper than max, counting
// through fragments. Introspection fields are not counted: they are open only
// to the internal tier, and gqlparser bounds their depth itself.
type depthLimit struct{ max int }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = depthLimit{}

func (depthLimit) ExtensionName() string                   { return "DepthLimit" }
func (depthLimit) Validate(graphql.ExecutableSchema) error { return nil }

func (d depthLimit) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if depth := selectionDepth(opCtx.Operation.SelectionSet); depth > d.max {
		return refusal(apperr.New(apperr.BadRequest,
			fmt.Sprintf("query is nested %d levels deep, more than the limit of %d", depth, d.max)))
	}
	return nil
}

// selectionDepth returns the deepest field nesting in set. The validator has
// already refused fragment cycles, so the recursion ends.
func selectionDepth(set ast.SelectionSet) int {
	deepest := 0
	for _, sel := range set {
		var d int
		switch s := sel.(type) {
		case *ast.Field:
			if strings.HasPrefix(s.Name, "__") {
				continue
			}
			d = 1 + selectionDepth(s.SelectionSet)
		case *ast.InlineFragment:
			d = selectionDepth(s.SelectionSet)
		case *ast.FragmentSpread:
			if s.Definition != nil {
				d = selectionDepth(s.Definition.SelectionSet)
			}
		}
		deepest = max(deepest, d)
	}
	return deepest
}

// introspectionForInternal enables introspection for keys of the internal
// tier and refuses, before execution, operations of anyone else that ask
// for __schema or __type.
type introspectionForInternal struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = introspectionForInternal{}

func (introspectionForInternal) ExtensionName() string                   { return "IntrospectionForInternal" }
func (introspectionForInternal) Validate(graphql.ExecutableSchema) error { return nil }

func (introspectionForInternal) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if p, ok := keys.FromContext(ctx); ok && p.Tier == db.TierInternal {
		opCtx.DisableIntrospection = false
		return nil
	}
	if introspects(opCtx.Operation.SelectionSet) {
		return refusal(apperr.New(apperr.ForbiddenTier, "introspection is available to the internal tier only"))
	}
	return nil
}

// introspects reports whether a root selection set asks for __schema or __type.
func introspects(set ast.SelectionSet) bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Name == "__schema" || s.Name == "__type" {
				return true
			}
		case *ast.InlineFragment:
			if introspects(s.SelectionSet) {
				return true
			}
		case *ast.FragmentSpread:
			if s.Definition != nil && introspects(s.Definition.SelectionSet) {
				return true
			}
		}
	}
	return false
}
