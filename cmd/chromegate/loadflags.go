package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/chromegate/chromegate/executor/cdp"
	"github.com/chromegate/chromegate/mcp/httpapi"
)

// loadFlags are the choices that matter when one server holds many
// sessions at once (serve --http): how each new session is started and
// what the shared browser keeps in reserve.
type loadFlags struct {
	warm  onOff
	spare string // auto | on | off
}

func (l *loadFlags) register(fs *flag.FlagSet) {
	l.warm = true
	fs.Var(&l.warm, "warm-sessions", "with --http: on | off: open a new MCP session's browser context and first tab as soon as it has initialised, not on its first call")
	fs.StringVar(&l.spare, "spare-renderer", "auto", "auto | on | off: keep Chromium's spare renderer process (started ahead for the next navigation); auto keeps it for one session (stdio) and turns it off with --http, where many contexts navigating in turn would start and discard one for nearly every navigation")
}

// browser applies the flags to the CDP backend's options; http says
// whether the server serves many sessions (--http).
func (l *loadFlags) browser(o *cdp.Options, http bool) error {
	switch strings.ToLower(l.spare) {
	case "auto", "":
		o.NoSpareRenderer = http
	case "on":
		o.NoSpareRenderer = false
	case "off":
		o.NoSpareRenderer = true
	default:
		return fmt.Errorf("--spare-renderer %q: want auto, on or off", l.spare)
	}
	return nil
}

// http applies the flags to the HTTP front's options.
func (l *loadFlags) http(o *httpapi.Options) { o.NoWarm = !bool(l.warm) }
