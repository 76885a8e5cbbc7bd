// Package cdp is the playwright-go backend of chromegate: it launches
// Chromium (persistent profile by default, in-memory with Isolated) or
// attaches to a running one over CDP, and implements every primitive of
// executor.Executor on it with trusted input events.
//
// The Playwright driver is a Node.js program (playwright-core); FindDriver
// locates it and InstallDriver installs it from the npm registry. Nothing
// in this package downloads a browser.
//
// One Backend runs one driver and one browser. The default session uses the
// browser's default context (the persistent profile); every named session
// gets a browser context of its own in the same browser. When the browser
// or the driver dies, every Executor's Done channel closes, calls in flight
// fail with TARGET_GONE, and the next Open starts both again.
//
// Every primitive runs the blocking playwright-go calls on a goroutine and
// returns when its context ends (TIMEOUT) or the browser dies (TARGET_GONE);
// the Playwright timeouts it passes end a little before the context, so a
// more precise error (SELECTOR_NOT_FOUND, a navigation's net::ERR_*) wins
// when there is one.
//
// The launched browser makes no call of its own. Background networking,
// component and variations updates (on-demand components included), network
// time, Google sign-in's account checks, safe-browsing updates, optimization
// hints and model downloads, domain reliability, metrics and crash reports,
// default apps, autofill's server and preconnects to the search engine are
// all off (quiet.go lists the switches and what each was seen to do), for
// the persistent profile, --isolated and the extension backend's launch
// alike, and for a browser a local Playwright server launches for us. What
// slips through still meets the egress proxy: an isolated browser's own
// network goes to a listener that refuses every request and logs it
// (egress.Proxy.ListenBrowser); a persistent profile's browser has one proxy
// for everything, so its own requests are decided like the default
// session's (denied under strict egress, allowed to public hosts by the
// default policy). TestBrowserMakesNoCallOfItsOwn (e2e) holds every launch
// to this.
//
// Input says when it went nowhere. A key name Playwright cannot press is
// BAD_ARGS before anything is waited for, naming the key and showing what
// names look like (keys.go); typing, filling, clearing or pressing a
// typing key into a disabled or read-only field is BAD_ARGS, and any key
// on a disabled one, instead of keys sent into nothing and a success (the
// extension backend answers the same, through the same element script).
//
// Two choices differ from the obvious playwright-go calls, on purpose:
//   - playwright.Run checks the driver's version by running `node cli.js
//     --version` (half a second) before it starts the driver; FindDriver has
//     already read the version from package.json, so the driver is started
//     through a small shell shim that answers that probe (see runDriver).
//   - Download by URL uses Go's HTTP client with the session's cookies rather
//     than Playwright's APIRequest, which buffers the whole body in the
//     driver and so cannot enforce MaxDownloadBytes on a body that lies about
//     its length.
package cdp
