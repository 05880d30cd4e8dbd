package rest

import "embed"

// dashboardFiles are the dashboard page and its assets (rest/dashboard/
// README.md says which packages and versions, and how to upgrade them).
//
//go:embed dashboard/index.html dashboard/*.js dashboard/*.css
var dashboardFiles embed.FS

// The dashboard's paths.
const (
	dashboardPath       = "/dashboard"
	dashboardAssetsPath = "/dashboard/assets"
)

// newDashboard renders the dashboard for a deployment with or without ETF
// flows: without them the page has no ETF panel and asks for nothing of it.
func newDashboard(etf bool) (*staticPage, error) {
	return newStaticPage(dashboardFiles, "dashboard", dashboardAssetsPath, map[string]any{"ETF": etf})
}
