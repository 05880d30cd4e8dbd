// Package graph owns feedapi's domain API: the GraphQL schema's resolvers,
// Relay connections over keyset cursors, per-request dataloaders, the typed
// domain errors and the query limits. REST and /graphql both execute here.
package graph

// Resolver is the root resolver and the point where dependencies are injected.
type Resolver struct{}
