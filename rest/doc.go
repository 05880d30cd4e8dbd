// Package rest owns feedapi's public HTTP interface: the chi router of the
// /v1 endpoints and /graphql, authentication by API key and the tier policy,
// per-key and per-IP rate limits, strict query-string parsing, the response
// envelope and its one table from domain error codes to HTTP statuses, and
// the HTTP niceties (ETag and 304, gzip, HEAD, request ids).
//
// Each /v1 endpoint is a fixed GraphQL document in queries/, embedded,
// parsed and validated against the executable schema once at start-up, and
// executed in-process by the graph package's executor. Field aliases in the
// documents give the REST field names, so the items of a response are
// copied into the envelope as the executor wrote them, never decoded.
//
// Imports point one way: rest uses graph (and graph's apperr, keys), never db.
package rest
