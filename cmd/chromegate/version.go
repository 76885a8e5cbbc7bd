package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/chromegate/chromegate/executor/cdp"
)

// version, commit and date are stamped at link time by `make release`
// (-ldflags "-X main.version=1.2.3 -X main.commit=… -X main.date=…").
// A binary built from a checkout (go build, go install) takes them from
// its build info instead: the module version and the VCS revision and time.
var (
	version = ""
	commit  = ""
	date    = ""
)

// buildStamp is what chromegate knows of the build that made it.
type buildStamp struct {
	Version  string // 1.2.3, a module version, or "dev"
	Commit   string // VCS revision, "" when unknown
	Date     string // commit time (RFC 3339), "" when unknown
	Modified bool   // built from a work tree with uncommitted changes
}

// stamp reads the link-time values first, then the build info.
func stamp() buildStamp {
	return stampFrom(version, commit, date, debug.ReadBuildInfo)
}

func stampFrom(v, c, d string, read func() (*debug.BuildInfo, bool)) buildStamp {
	s := buildStamp{Version: v, Commit: c, Date: d}
	if bi, ok := read(); ok {
		if s.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			s.Version = bi.Main.Version
		}
		for _, kv := range bi.Settings {
			switch kv.Key {
			case "vcs.revision":
				if s.Commit == "" {
					s.Commit = kv.Value
				}
			case "vcs.time":
				if s.Date == "" {
					s.Date = kv.Value
				}
			case "vcs.modified":
				s.Modified = kv.Value == "true" && c == ""
			}
		}
	}
	if s.Version == "" {
		s.Version = "dev"
	}
	return s
}

func chromegateVersion() string { return stamp().Version }

func depVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "unknown"
}

func printVersion(w io.Writer) {
	s := stamp()
	fmt.Fprintf(w, "chromegate %s\n", s.Version)
	c := s.Commit
	if c == "" {
		c = "unknown"
	}
	if s.Modified {
		c += " (modified)"
	}
	fmt.Fprintf(w, "  commit             %s\n", c)
	d := s.Date
	if d == "" {
		d = "unknown"
	}
	fmt.Fprintf(w, "  date               %s\n", d)
	fmt.Fprintf(w, "  go                 %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(w, "  playwright-go      %s (driver playwright-core %s)\n", depVersion("github.com/playwright-community/playwright-go"), cdp.DriverVersion)
	fmt.Fprintf(w, "  mcp go-sdk         %s\n", depVersion("github.com/modelcontextprotocol/go-sdk"))
	fmt.Fprintf(w, "  opa                %s\n", depVersion("github.com/open-policy-agent/opa"))
}
