package graph

// codegen runs gqlgen (it finds ../gqlgen.yml by walking up from this
// directory) and adds plain objects to the executable schema; inputhash
// then records what the code was generated from.
//go:generate go run ./internal/codegen -appenders github.com/feedapi/feedapi/graph/scalar
//go:generate go run ./internal/inputhash
