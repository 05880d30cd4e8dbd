// Package rest owns feedapi's public HTTP interface: the chi router of the
// /v1 endpoints and /graphql, their handlers, and the glue between REST and
// GraphQL: strict query-string parsing (rest/contract), the fixed queries
// and the shaping of their results into the envelope, the SSE streams over
// the live feeds, the GraphQL transports and subscriptions behind the key
// checks. What the handlers stand on has a package of its own: rest/auth
// (API keys, tiers, rate limits, the failed-authentication budget and its
// early refusals), rest/envelope (the envelopes, the error table, request
// ids, ETag and 304, gzip), rest/accesslog (the access log line and the
// request metrics), and the pages (rest/landing, rest/reference,
// rest/graphiql, rest/dashboard over rest/static).
//
// Each /v1 endpoint is a fixed GraphQL document in queries/, embedded,
// parsed and validated against the executable schema once at start-up, and
// executed in-process by the graph package's executor. Field aliases in the
// documents give the REST field names, so the items of a response are
// copied into the envelope as the executor wrote them, never decoded.
//
// Within the package, files call one way: rest.go (Config, New) wires
// routes.go, whose routes reach the handlers (graphql.go, subscriptions.go,
// stream.go, endpoints.go), which stand on server.go and the leaves.
// Imports point one way: rest uses graph (and graph's apperr, keys, live,
// limits), never db.
package rest
