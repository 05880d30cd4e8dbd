// Package db owns feedapi's storage: the PostgreSQL schema and its versioned
// migrations, the bun models, and every SQL query the service runs. Callers
// above it (package graph) see models and typed errors, never SQL.
package db
