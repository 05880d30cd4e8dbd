// Package reference is the rendered API reference of the OpenAPI document
// (GET /reference): Redoc's page and assets beside this file, pinned and
// embedded (README.md says which version, and how to upgrade it).
package reference

import (
	"embed"

	"github.com/feedapi/feedapi/rest/contract"
	"github.com/feedapi/feedapi/rest/static"
)

// files are the reference's page and assets.
//
//go:embed index.html *.js *.css
var files embed.FS

// New renders the API reference's page for the OpenAPI document.
func New() (*static.Page, error) {
	return static.New(files, "reference", ".", contract.ReferenceAssetsPath, map[string]any{"Document": "/v1/openapi.json"})
}
