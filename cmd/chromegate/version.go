package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/chromegate/chromegate/executor/cdp"
)

// version is set at link time (-ldflags "-X main.version=v1.2.3"); otherwise
// it comes from the module's build info.
var version = ""

func chromegateVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

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
	fmt.Fprintf(w, "chromegate %s\n", chromegateVersion())
	fmt.Fprintf(w, "  go                 %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(w, "  playwright-go      %s (driver playwright-core %s)\n", depVersion("github.com/playwright-community/playwright-go"), cdp.DriverVersion)
	fmt.Fprintf(w, "  mcp go-sdk         %s\n", depVersion("github.com/modelcontextprotocol/go-sdk"))
	fmt.Fprintf(w, "  opa                %s\n", depVersion("github.com/open-policy-agent/opa"))
}
