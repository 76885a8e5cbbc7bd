// Package realapps drives real web applications from Debian packages
// (MediaWiki on SQLite, DokuWiki on files, WordPress on a MariaDB of the
// run's own) the way a model drives them: a scripted agent that reads only
// the page's outline (chromegate's snapshot, or Playwright MCP's aria
// snapshot), finds each control by role and accessible name, acts on its
// ref, and checks every task's outcome in the application's own database
// or files.
//
// Every application runs from a temp dir: its data, its configuration,
// and any server it needs besides PHP's built-in one (WordPress's MariaDB,
// on its own socket and a free port on 127.0.0.1), stopped by App.Close.
// Nothing is written outside it, and nothing reaches the internet.
//
// The agent is the same for every browser server; a Browser adapts one
// server's tools and text to it. The e2e tests run the short set through
// chromegate; the peers bench (e2e/bench, -tags peers) runs every task
// through chromegate and Playwright MCP in the same run and prints the
// counts and ratios.
package realapps
