// Package genhash computes the fingerprint of the generated code's inputs
// that the staleness test compares with the one recorded at generation time.
package genhash

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// File is where the fingerprint is recorded, relative to the graph directory.
const File = "generated/inputs.sha256"

// inputs are the files, relative to the module root, that the generated
// code is made from: gqlgen's inputs, the plain-object generator and the
// Append functions it calls.
var inputs = []string{
	"schema.graphqls",
	"gqlgen.yml",
	"graph/internal/codegen/main.go",
	"graph/internal/codegen/plain.gotpl",
	"graph/scalar/append.go",
}

// Inputs returns the hex SHA-256 of the inputs, in order, in the module
// root dir.
func Inputs(root string) (string, error) {
	h := sha256.New()
	for _, name := range inputs {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			return "", fmt.Errorf("read gqlgen input: %w", err)
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
