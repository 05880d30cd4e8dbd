package graph

// gqlgen finds ../gqlgen.yml by walking up from this directory and runs there.
//go:generate go tool gqlgen generate
