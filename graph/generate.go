package graph

// gqlgen finds ../gqlgen.yml by walking up from this directory and runs
// there; inputhash then records what the code was generated from.
//go:generate go tool gqlgen generate
//go:generate go run ./internal/inputhash
