package main

import (
	"io/fs"
	"os/exec"
	"strings"
	"testing"
	"text/template"

	"github.com/99designs/gqlgen/codegen/templates"
)

// TestPatchesApplyToGqlgen applies the patches to the templates of the
// gqlgen in go.mod: an upgrade that moves an anchor fails here, in CI,
// rather than at the next go generate.
func TestPatchesApplyToGqlgen(t *testing.T) {
	dir, err := exec.Command("go", "list", "-f", "{{.Dir}}", "github.com/99designs/gqlgen/codegen").Output()
	if err != nil {
		t.Fatalf("locate gqlgen: %v", err)
	}
	tfs, err := execTemplates(strings.TrimSpace(string(dir)))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range patches {
		b, err := fs.ReadFile(tfs, p.file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), p.replacement) {
			t.Errorf("%s lacks its patch %q", p.file, p.replacement)
		}
	}
	funcs := templates.Funcs()
	for name, f := range (&planner{}).funcs() {
		funcs[name] = f
	}
	if _, err := template.New("").Funcs(funcs).ParseFS(tfs, "*.gotpl"); err != nil {
		t.Errorf("the patched templates do not parse: %v", err)
	}
}
