// Package bench holds the peer benchmark: chromegate against Playwright MCP
// and Chrome DevTools MCP, each run over stdio by the same MCP Go SDK
// client, on the same Chromium and the same local pages. It prints the size
// of each server's page-reading result and the median latency of common
// calls, with ratios to chromegate.
//
// TestCallPath, under the "callpath" tag (make callpath), counts the code
// one click by ref runs, for the shape of the call path.
//
// It installs the peers from npm and takes minutes, so it is behind the
// "peers" build tag and never runs in `go test ./...` or CI:
//
//	make bench-peers
//	go test -tags peers -run TestPeers -count=1 -v ./e2e/bench/
//
// TestEgressCost, under the same tag (make bench-egress), prices the
// egress boundary: navigate latency with chromegate's request boundary on,
// off and by routing, against Playwright MCP with and without
// --allowed-origins, and the request cache's hit rate.
//
// Nothing here downloads a browser: the peers are installed with
// PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD and PUPPETEER_SKIP_DOWNLOAD set, and
// every server is pointed at the system Chromium.
package bench
