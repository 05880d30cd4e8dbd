// Package graphiql is the GraphiQL page of GET /graphql for a browser, and
// its assets beside this file, pinned and embedded (README.md says which
// packages and versions, and how to upgrade them).
package graphiql

import (
	"embed"

	"github.com/feedapi/feedapi/rest/contract"
	"github.com/feedapi/feedapi/rest/static"
)

// files are the GraphiQL page and its assets.
//
//go:embed index.html *.js *.css
var files embed.FS

// New renders the GraphiQL page.
func New() (*static.Page, error) {
	return static.New(files, "graphiql", ".", contract.GraphiQLAssetsPath, nil)
}
