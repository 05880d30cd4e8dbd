package rest

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/rest/envelope"
)

// queryFiles holds one GraphQL document per endpoint.
//
//go:embed queries/*.graphql
var queryFiles embed.FS

// readQueries returns the embedded documents by name (file name without
// .graphql).
func readQueries() (map[string]string, error) {
	entries, err := fs.ReadDir(queryFiles, "queries")
	if err != nil {
		return nil, fmt.Errorf("read embedded queries: %w", err)
	}
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		b, err := fs.ReadFile(queryFiles, path.Join("queries", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read embedded query %s: %w", e.Name(), err)
		}
		out[strings.TrimSuffix(e.Name(), ".graphql")] = string(b)
	}
	return out, nil
}

// newRunner prepares the named documents against schema and returns their
// runner, whose executor is graph's as cfg configures it, and the prepared
// document of each name.
func newRunner(schema graphql.ExecutableSchema, cfg graph.Config, names []string, recover graphql.RecoverFunc) (*runner, func(name string) *ast.QueryDocument, error) {
	sources, err := readQueries()
	if err != nil {
		return nil, nil, err
	}
	docs, err := prepare(schema.Schema(), sources, names)
	if err != nil {
		return nil, nil, err
	}
	exec := executor.New(schema)
	graph.ConfigureExecutor(exec, cfg)
	// Overrides of graph's choices for the fixed queries: only the prepared
	// documents; errors keep their cause, so that a domain error reaches
	// the envelope as it is and anything else is logged once, by
	// writeError, with the request id.
	exec.SetQueryCache(docs)
	exec.SetErrorPresenter(graphql.DefaultErrorPresenter)
	exec.SetRecoverFunc(recover)
	return &runner{exec: exec, sources: sources}, func(name string) *ast.QueryDocument { return docs[sources[name]] }, nil
}

// prepare parses and validates the named documents against schema. Each must
// hold exactly one operation. The result maps each document's text to its
// parsed form.
func prepare(schema *ast.Schema, sources map[string]string, names []string) (preparedDocs, error) {
	docs := make(preparedDocs, len(names))
	for _, name := range names {
		src, ok := sources[name]
		if !ok {
			return nil, fmt.Errorf("query %s: no queries/%s.graphql", name, name)
		}
		doc, err := parser.ParseQuery(&ast.Source{Name: name + ".graphql", Input: src})
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", name, err)
		}
		if errs := validator.ValidateWithRules(schema, doc, rules.NewDefaultRules()); len(errs) > 0 {
			return nil, fmt.Errorf("query %s is invalid against the schema: %w", name, errs)
		}
		if len(doc.Operations) != 1 {
			return nil, fmt.Errorf("query %s: want exactly one operation, have %d", name, len(doc.Operations))
		}
		docs[src] = doc
	}
	return docs, nil
}

// preparedDocs is the executor's query cache: it answers for the documents
// validated at start-up and for nothing else, and never grows, so the
// executor neither parses nor validates a document per request.
type preparedDocs map[string]*ast.QueryDocument

var _ graphql.Cache[*ast.QueryDocument] = preparedDocs(nil)

func (p preparedDocs) Get(_ context.Context, query string) (*ast.QueryDocument, bool) {
	doc, ok := p[query]
	return doc, ok
}

func (preparedDocs) Add(context.Context, string, *ast.QueryDocument) {}

// runner executes the prepared documents in-process.
type runner struct {
	exec    *executor.Executor
	sources map[string]string
}

// run executes the named document with vars and returns the response's data
// object as the executor wrote it (into ctx's graph.WithResponseBuffer, if
// it has one). A domain error of the resolvers is
// returned as it is (an *apperr.Error in the chain); anything else is an
// internal error.
func (q *runner) run(ctx context.Context, name string, vars map[string]any) ([]byte, error) {
	src, ok := q.sources[name]
	if !ok {
		return nil, fmt.Errorf("query %s is not prepared", name)
	}
	ctx = graphql.StartOperationTrace(ctx)
	opCtx, errs := q.exec.CreateOperationContext(ctx, &graphql.RawParams{Query: src, Variables: vars})
	if errs != nil {
		return nil, queryError(name, errs)
	}
	handler, ctx := q.exec.DispatchOperation(ctx, opCtx)
	resp := handler(ctx)
	if resp == nil {
		return nil, fmt.Errorf("query %s: no response: %w", name, context.Cause(ctx))
	}
	if len(resp.Errors) > 0 {
		return nil, queryError(name, resp.Errors)
	}
	return resp.Data, nil
}

// queryError returns the first domain error of errs, so that its code and
// message reach the client, or an internal error that wraps them all.
func queryError(name string, errs gqlerror.List) error {
	for _, e := range errs {
		if d := apperr.As(e); d != nil {
			return d
		}
		if code, ok := e.Extensions["code"].(string); ok && envelope.PublicCode(apperr.Code(code)) {
			param, _ := e.Extensions["param"].(string)
			return &apperr.Error{Code: apperr.Code(code), Param: param, Message: e.Message, Err: e}
		}
	}
	return fmt.Errorf("query %s: %w", name, errs)
}
