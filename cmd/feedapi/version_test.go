package main

import (
	"bytes"
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	vcs := func(revision, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: revision}, {Key: "vcs.modified", Value: modified}}
	}
	tests := []struct {
		name   string
		linked string
		info   *debug.BuildInfo
		ok     bool
		want   string
	}{
		{"linked version wins", "v1.4.0", &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}}, true, "v1.4.0"},
		{"module version from a tag", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}}, true, "v1.3.0"},
		{"pseudo-version names the commit", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261123220403-bcfd2e0bc990+dirty"}}, true,
			"v0.0.0-20261123220403-bcfd2e0bc990+dirty"},
		{"revision of a clean tree", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("bcfd2e0bc990609f2a48166e073f1f9ed5473f08", "false")}, true,
			"dev-bcfd2e0bc990"},
		{"revision with uncommitted changes", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("bcfd2e0bc990609f2a48166e073f1f9ed5473f08", "true")}, true,
			"dev-bcfd2e0bc990+dirty"},
		{"no VCS information (go run, tests)", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "dev"},
		{"no build information", "", nil, false, "dev"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := buildVersion(tt.linked, tt.info, tt.ok); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestVersionFlag(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--version"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := strings.TrimSpace(stdout.String())
	if !strings.HasPrefix(out, "feedapi "+version()+" (go") || strings.Contains(out, "\n") {
		t.Errorf("--version printed %q, want one line: feedapi %s (go…)", out, version())
	}
}
