package client

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestClientIsFresh regenerates the client from the document and fails
// while client.gen.go differs, so that a change of the document reaches the
// client (and the tests that use it) in the same commit.
func TestClientIsFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("runs oapi-codegen")
	}
	// The same configuration, writing elsewhere.
	cfg, err := os.ReadFile("oapi-codegen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "client.gen.go")
	cfg = bytes.Replace(cfg, []byte("\noutput: client.gen.go\n"), []byte("\noutput: "+out+"\n"), 1)
	if !bytes.Contains(cfg, []byte(out)) {
		t.Fatal("oapi-codegen.yaml has no line output: client.gen.go")
	}
	if err := os.WriteFile(filepath.Join(dir, "oapi-codegen.yaml"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "tool", "oapi-codegen", "-config", filepath.Join(dir, "oapi-codegen.yaml"), "../testdata/openapi.golden.json")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("oapi-codegen: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("client.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("rest/client/client.gen.go is stale: it was not generated from rest/testdata/openapi.golden.json. " +
			"Run go generate ./rest/client/ (after go test ./rest -run TestOpenAPIGolden -update when the document changed) and commit the result.")
	}
}
