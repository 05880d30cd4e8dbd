// Package genhash computes the fingerprint of gqlgen's inputs that the
// staleness test compares with the one recorded at generation time.
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

// Inputs returns the hex SHA-256 of schema.graphqls followed by gqlgen.yml
// in the module root dir.
func Inputs(root string) (string, error) {
	h := sha256.New()
	for _, name := range []string{"schema.graphqls", "gqlgen.yml"} {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			return "", fmt.Errorf("read gqlgen input: %w", err)
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
