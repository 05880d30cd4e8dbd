// Package dashboard is the internal dashboard of GET /dashboard (the live
// feed, and ETF flows where offered): its page and assets beside this
// file, pinned and embedded (README.md says which packages and versions,
// and how to upgrade them). It reads /graphql with the key its user gives.
package dashboard

import (
	"embed"

	"github.com/feedapi/feedapi/rest/contract"
	"github.com/feedapi/feedapi/rest/static"
)

// files are the dashboard page and its assets.
//
//go:embed index.html *.js *.css
var files embed.FS

// New renders the dashboard for a deployment with or without ETF flows:
// without them the page has no ETF panel and asks for nothing of it.
func New(etf bool) (*static.Page, error) {
	return static.New(files, "dashboard", ".", contract.DashboardAssetsPath, map[string]any{"ETF": etf})
}
