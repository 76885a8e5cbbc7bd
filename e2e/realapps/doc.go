// Package realapps drives real web applications from Debian packages
// (MediaWiki on SQLite, DokuWiki on files) the way a model drives them: a
// scripted agent that reads only the page's outline (chromegate's snapshot,
// or Playwright MCP's aria snapshot), finds each control by role and
// accessible name, acts on its ref, and checks every task's outcome in the
// application's own database or files.
//
// The agent is the same for every browser server; a Browser adapts one
// server's tools and text to it. The e2e tests run the short set through
// chromegate; the peers bench (e2e/bench, -tags peers) runs every task
// through chromegate and Playwright MCP in the same run and prints the
// counts and ratios.
package realapps
