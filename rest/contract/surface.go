package contract

// APIVersion is the version of the REST API, the first segment of its
// paths and meta.api_version.
const APIVersion = "v1"

// PaneValues and AssetValues are the values of the GraphQL enums Pane and
// EtfAsset, which package rest checks against the executable schema when
// it starts.
var (
	PaneValues  = []string{"news", "crypto", "wire", "blogs", "twitter", "iansintel"}
	AssetValues = []string{"BTC", "ETH", "SOL", "HYPE"}
)

// Poll cache kinds of the polled lists' first pages.
const (
	PollPosts    = "posts"
	PollFirehose = "firehose"
)

// The paths of the service beside the /v1 endpoints.
const (
	HealthPath          = "/" + APIVersion + "/health"
	OpenAPIPath         = "/" + APIVersion + "/openapi.json"
	GraphQLPath         = "/graphql"
	GraphiQLAssetsPath  = "/graphql/assets"
	DashboardPath       = "/dashboard"
	DashboardAssetsPath = "/dashboard/assets"
	ReferencePath       = "/reference"
	ReferenceAssetsPath = "/reference/assets"
)

// LandingPaths answer the landing page.
var LandingPaths = []string{"/", "/" + APIVersion}

// PollIntervalHeader tells a poller of a polled list the pace worth
// polling it at, in seconds; MinPollInterval is its least value.
const (
	PollIntervalHeader = "X-Poll-Interval"
	MinPollInterval    = 2
)

// LandingLink is one link of the landing page. The list below is the one
// declaration read by the HTML page, the JSON answer and the OpenAPI
// schema of data.links.
type LandingLink struct {
	Rel         string // its name in data.links
	Href        string
	Title       string
	Description string
}

// LandingLinks are the places to start.
var LandingLinks = []LandingLink{
	{"health", HealthPath, "Health", "The service's health and build version. No key."},
	{"openapi", OpenAPIPath, "OpenAPI document", "The OpenAPI 3.1 description of every path, for code generators and tools. No key."},
	{"reference", ReferencePath, "API reference", "The OpenAPI document rendered for reading, served by this server alone. No key."},
	{"graphql", GraphQLPath, "GraphQL (GraphiQL)", "The GraphQL API behind /v1, for internal dashboards; a browser gets the GraphiQL playground. Needs a key of tier internal."},
	{"dashboard", DashboardPath, "Dashboard", "The internal dashboard: the live feed, and ETF flows where offered. Asks for a key of tier internal."},
}
