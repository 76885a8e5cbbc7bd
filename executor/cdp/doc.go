// Package cdp is the playwright-go backend of chromegate: it launches
// Chromium (persistent profile by default, in-memory with Isolated) or
// attaches to a running one over CDP, and implements every primitive of
// executor.Executor on it with trusted input events.
//
// The Playwright driver is a Node.js program (playwright-core); it is found
// with FindDriver and installed from the npm registry with InstallDriver.
// Nothing in this package downloads a browser.
package cdp
