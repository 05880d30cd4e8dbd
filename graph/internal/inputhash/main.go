// Command inputhash records the SHA-256 of the generated code's inputs (see
// genhash) next to the generated code, so that a test can tell when the
// generated code is older than its inputs. Run by `go generate ./graph/`
// from the graph directory.
package main

import (
	"fmt"
	"os"

	"github.com/feedapi/feedapi/graph/internal/genhash"
)

func main() {
	sum, err := genhash.Inputs("..")
	if err != nil {
		fmt.Fprintln(os.Stderr, "inputhash:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(genhash.File, []byte(sum+"\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "inputhash:", err)
		os.Exit(1)
	}
}
