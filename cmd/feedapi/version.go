package main

import (
	"runtime/debug"
	"strings"
)

// linkedVersion, when set at link time (-ldflags "-X main.linkedVersion=v1.4.0"),
// is the version this binary reports; otherwise Go's build info decides.
var linkedVersion string

// buildVersion is the version a binary reports in health, in --version and in
// feedapi_build_info: the linked version if any; else the module version Go
// stamped into the binary (a tag, or a pseudo-version that names the commit);
// else the VCS revision with "+dirty" for uncommitted changes; else "dev"
// (go run and tests carry no VCS information).
func buildVersion(linked string, info *debug.BuildInfo, ok bool) string {
	if linked != "" {
		return linked
	}
	if !ok || info == nil {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var revision string
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if revision == "" {
		return "dev"
	}
	if len(revision) > 12 {
		revision = revision[:12]
	}
	v := "dev-" + revision
	if modified {
		v += "+dirty"
	}
	return v
}

// version is this binary's build version (see buildVersion).
func version() string {
	info, ok := debug.ReadBuildInfo()
	return buildVersion(linkedVersion, info, ok)
}

// versionLine is what --version prints: the version, the Go toolchain, and
// the revision when Go recorded one.
func versionLine() string {
	info, ok := debug.ReadBuildInfo()
	var b strings.Builder
	b.WriteString("feedapi ")
	b.WriteString(buildVersion(linkedVersion, info, ok))
	if ok && info != nil {
		b.WriteString(" (")
		b.WriteString(info.GoVersion)
		for _, s := range info.Settings {
			if s.Key == "vcs.time" {
				b.WriteString(", committed ")
				b.WriteString(s.Value)
			}
		}
		b.WriteString(")")
	}
	return b.String()
}
