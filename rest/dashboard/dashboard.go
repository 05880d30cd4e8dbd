package rest

import (
	"embed"

	"github.com/feedapi/feedapi/rest/contract"
)

// dashboardFiles are the dashboard page and its assets (rest/dashboard/
// README.md says which packages and versions, and how to upgrade them).
//
//go:embed dashboard/index.html dashboard/*.js dashboard/*.css
var dashboardFiles embed.FS

// newDashboard renders the dashboard for a deployment with or without ETF
// flows: without them the page has no ETF panel and asks for nothing of it.
func newDashboard(etf bool) (*staticPage, error) {
	return newStaticPage(dashboardFiles, "dashboard", contract.DashboardAssetsPath, map[string]any{"ETF": etf})
}
