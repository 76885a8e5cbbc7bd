# The two commands in the README: `make demo` and `make test`. Each installs
# what it needs on a fresh Debian machine (Chromium, Node.js, the pinned
# Playwright driver) and nothing that downloads a browser.
SHELL := /bin/bash
GO ?= go
BIN := bin/chromegate
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# mcpb, release, extension-zip and mcpb-deps: see "What chromegate ships" below.
.PHONY: mcpb release extension-zip mcpb-deps
.PHONY: callpath
.PHONY: image image-smoke image-deps
.PHONY: all build deps chromium node pdftotext driver webmcp-deps conformance-deps conformance demo test test-unit test-unit-cdp test-cdp test-ext test-remote test-remote-server test-remote-endpoint test-lane-a test-lane-b vet fuzz fault sweep bench bench-peers bench-egress realapps realapps-deps test-flow metrics-deps fleet-deps test-fleet bench-realapps clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/chromegate

# Debian's chromium, and its headless shell (chromegate never downloads a
# browser): the shell is the browser a headless chromegate launches when it
# is installed (--headless-shell=auto), as Playwright does; chromium still
# serves --headed, --with-extension and the extension's suite.
chromium:
	@if { [ -x /usr/bin/chromium ] && [ -x /usr/lib/chromium/chromium-headless-shell ]; } || [ -n "$$CHROME_PATH" ]; then :; else \
	  echo "== installing Debian chromium and chromium-headless-shell"; \
	  $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q chromium chromium-headless-shell; fi

# Node.js runs the Playwright driver; npm fetches it.
node:
	@if command -v node >/dev/null && command -v npm >/dev/null; then :; else \
	  echo "== installing Node.js"; \
	  $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q nodejs npm; fi

# pdftotext (Debian's poppler-utils), with which the e2e tests read the
# text of the PDFs the pdf tool saves.
pdftotext:
	@if command -v pdftotext >/dev/null; then :; else \
	  echo "== installing poppler-utils (pdftotext)"; \
	  $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q poppler-utils; fi

# playwright-core at the version playwright-go pins, from npm, into
# chromegate's cache dir (idempotent).
driver: build node
	./$(BIN) setup

# The real @mcp-b/global (pinned in e2e/testdata/webmcp/package-lock.json),
# which the WebMCP e2e tests serve to a page on 127.0.0.1.
WEBMCP_DIR := e2e/testdata/webmcp
webmcp-deps: node
	@if [ -f $(WEBMCP_DIR)/node_modules/@mcp-b/global/dist/index.iife.js ]; then :; else \
	  echo "== installing @mcp-b/global for the e2e tests"; \
	  npm ci --prefix $(WEBMCP_DIR) --no-audit --no-fund --ignore-scripts; fi

# The official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in e2e/testdata/conformance/package-lock.json), which
# TestConformance runs against the built binary; shim-globsync.mjs lets it
# run on Node 20 (it fails when the suite's file changed shape).
CONFORMANCE_DIR := e2e/testdata/conformance
CONFORMANCE_PKG = $(CONFORMANCE_DIR)/node_modules/@modelcontextprotocol/conformance
conformance-deps: node
	@if [ -f $(CONFORMANCE_PKG)/dist/index.js ] && [ "$$(node -p 'require("./$(CONFORMANCE_PKG)/package.json").version')" = \
	  "$$(node -p 'require("./$(CONFORMANCE_DIR)/package.json").dependencies["@modelcontextprotocol/conformance"]')" ]; then :; else \
	  echo "== installing @modelcontextprotocol/conformance for the e2e tests"; \
	  npm ci --prefix $(CONFORMANCE_DIR) --no-audit --no-fund --ignore-scripts; fi
	@node $(CONFORMANCE_DIR)/shim-globsync.mjs

deps: chromium driver webmcp-deps conformance-deps pdftotext

# The real applications the e2e suite drives (e2e/realapps): Debian's
# MediaWiki on SQLite, DokuWiki, and WordPress on a MariaDB the test starts
# (server-core: no system service), served by PHP's built-in server with
# throw-away data in a temp dir. No web server is installed on their
# behalf; a postinst that starts one is stopped by Debian's policy-rc.d in
# containers and nothing the tests use listens on port 80.
REALAPPS_PKGS := php-cli php-sqlite3 php-intl php-mbstring php-xml mediawiki dokuwiki sqlite3 \
  wordpress wordpress-theme-twentytwentythree mariadb-server-core mariadb-client-core php-mysql
realapps-deps:
	@if [ -x /usr/bin/php ] && [ -f /usr/share/mediawiki/maintenance/install.php ] && [ -f /usr/share/dokuwiki/doku.php ] \
	  && [ -d /usr/share/php8.2-sqlite3 ] && [ -x /usr/bin/sqlite3 ] && [ -f /usr/share/wordpress/wp-settings.php ] \
	  && [ -f /usr/share/wordpress/wp-content/themes/twentytwentythree/theme.json ] && [ -x /usr/sbin/mariadbd ] \
	  && [ -d /usr/share/php8.2-mysql ]; then :; else \
	  echo "== installing the real applications: $(REALAPPS_PKGS)"; \
	  $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q --no-install-recommends $(REALAPPS_PKGS); fi

# Debian's prometheus, which scrapes serve --metrics-addr in
# TestMetricsScrapedByPrometheus.
metrics-deps:
	@if [ -x /usr/bin/prometheus ]; then :; else \
	  echo "== installing prometheus"; \
	  $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q --no-install-recommends prometheus; fi

# Debian's redis-server and haproxy: the fleet's tests (mcp/fleet,
# mcp/httpapi, e2e TestFleet) run a real Redis and the shipped HAProxy
# config on loopback. A service their packages start is not used (no test
# talks to the default ports).
FLEET_PKGS := redis-server haproxy
fleet-deps:
	@if [ -x /usr/bin/redis-server ] && [ -x /usr/sbin/haproxy ]; then :; else \
	  echo "== installing $(FLEET_PKGS)"; \
	  $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q --no-install-recommends $(FLEET_PKGS); fi

# The fleet alone (`make test` runs the same tests in its lanes): the
# shared state against a real Redis, then three replicas, Redis, HAProxy,
# a bundle server, a decision-log collector and Prometheus on loopback
# with 16 agents (e2e TestFleet*).
test-fleet: deps fleet-deps metrics-deps
	CI=true $(GO) test -race -count=1 -timeout 10m ./mcp/fleet/
	CI=true $(GO) test -race -count=1 -timeout 10m -run '^TestFleet' ./mcp/httpapi/
	CI=true $(GO) test -race -count=1 -timeout 15m -run '^TestFleet' -v ./e2e/

# Every task of every real application through chromegate (CI runs the
# short set inside `make test`).
realapps: deps realapps-deps
	CI=true CHROMEGATE_REALAPPS=full $(GO) test -race -count=1 -timeout 20m -run '^TestRealApps$$' -v ./e2e/

# The attack suite in full (e2e/flowattack_test.go): every channel ×
# carrier under the default and the security-team policies, the table and
# the success rates; and the utility suite (e2e/flowutility_test.go).
# `make test` runs the attacks' subset; the utility suite (the share of
# calls the security-team policy would refuse or ask) runs here only.
test-flow: deps realapps-deps
	CI=true CHROMEGATE_FLOW_MATRIX=full CHROMEGATE_E2E_LONG=1 $(GO) test -race -count=1 -timeout 20m -run '^(TestFlowAttacks|TestFlowUtility)$$' -v ./e2e/

# The same agent and tasks through chromegate and Playwright MCP (default
# and lean), in the same run: calls, characters read, wall time, ratios.
bench-realapps: deps realapps-deps
	$(GO) test -tags peers -run '^TestRealApps$$' -count=1 -timeout 60m -v ./e2e/bench/

# What chromegate ships, into dist/ (not committed):
#   make mcpb                  the Claude Desktop bundle for this machine,
#                              chromegate-VERSION-OS-ARCH.mcpb
#   make release VERSION=x.y.z for linux, macOS and Windows on amd64 and
#                              arm64: archives (.tar.gz; .zip for Windows)
#                              with the binary, README and the extension,
#                              bundles, the extension's zip, SHA256SUMS
#   make extension-zip         the extension alone, for "Load unpacked"
# Binaries are static (CGO_ENABLED=0), -trimpath, with the version, commit
# and date stamped (chromegate version). The bundle's manifest, tools
# included, is written from the tool table; the official mcpb CLI
# (@anthropic-ai/mcpb, pinned in e2e/testdata/mcpb/package-lock.json, which
# the tests use too) validates and packs it.
MCPB_DIR := e2e/testdata/mcpb
MCPB := $(MCPB_DIR)/node_modules/.bin/mcpb
VERSION ?= $(shell git describe --tags --match 'v[0-9]*' 2>/dev/null | sed 's/^v//')
RELEASE_VERSION = $(or $(VERSION),0.0.0-dev)
HOST_TARGET = $(shell $(GO) env GOOS)/$(shell $(GO) env GOARCH)
DIST := dist

mcpb-deps: node
	@if [ -x $(MCPB) ]; then :; else \
	  echo "== installing @anthropic-ai/mcpb (the MCP Bundle CLI)"; \
	  npm ci --prefix $(MCPB_DIR) --no-audit --no-fund --ignore-scripts; fi

mcpb: mcpb-deps
	$(GO) run ./cmd/dist -version $(RELEASE_VERSION) -targets $(HOST_TARGET) -archives=false -mcpb $(abspath $(MCPB)) -out $(DIST)

release: mcpb-deps
	$(GO) run ./cmd/dist -version $(RELEASE_VERSION) -targets all -mcpb $(abspath $(MCPB)) -out $(DIST)
	cd $(DIST) && sha256sum -c SHA256SUMS

# The container image (cmd/chromegate/deploy/image): Debian's headless
# shell, Node.js, the pinned driver and the static binary, non-root, for a
# read-only root; built without a daemon by Debian's buildah from a
# debootstrap'd Debian, written to bin/chromegate-image.tar (OCI archive).
# image-smoke runs its chromegate version and doctor inside it.
image-deps:
	@if command -v buildah >/dev/null && command -v debootstrap >/dev/null; then :; else \
	  echo "== installing buildah and debootstrap"; \
	  $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q --no-install-recommends buildah debootstrap; fi

image: image-deps
	$(SUDO) env "PATH=$$PATH" GO=$(GO) cmd/chromegate/deploy/image/build.sh

image-smoke:
	$(SUDO) cmd/chromegate/deploy/image/build.sh smoke

extension-zip: build
	@mkdir -p $(DIST)
	./$(BIN) extension pack $(DIST)/chromegate-extension.zip

demo: deps
	./$(BIN) demo

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	$(GO) vet ./...

# `make test`: vet, the extension's own tests, then two lanes side by side
# (make -j2), each one stream of browsers at a time, which is what two
# cores carry without starving a test's deadlines:
#
# - lane A: the packages whose tests start no browser (UNIT_PKGS, two at a
#   time: builds and the policies' Rego keep both cores busy), then the e2e
#   suite through the extension, then on a browser attached by
#   --cdp-endpoint;
# - lane B: executor/cdp's tests (they start browsers), the e2e suite on
#   the launched browser, then on a Playwright browser server.
#
# The lanes carry about the same work: from a clean clone on this 2-core
# machine (2026-11-29, 18 min 11 s in all) the two e2e suites on cdp and
# ext took 12.7 and 9.3 min, browser-server and cdp-endpoint 3.4 each,
# executor/cdp 1, the units about 4.
# Which tests run on which backend each test declares in its first
# statement (testkit.Backends, internal/testkit): a run names only its
# backend (CHROMEGATE_E2E_BACKEND), skips every test not declared for it,
# and prints its line of the matrix (how many ran, were not declared for
# it, were long, skipped themselves), which `make test` prints again at its
# end from E2E_MATRIX. Long tests (soaks, sweeps) run only in their own
# target (testkit.Long: `make fault`; the benchmarks and sweeps are not
# tests: `make bench`, `make sweep`). `go test` replays every fuzz target's
# seeds and saved failures (testdata/fuzz); exploring for new inputs is
# `make fuzz`'s job, not the tests': each target's instrumented build alone
# takes ~20 s here, about ten minutes for the set.
UNIT_PKGS = $(shell $(GO) list ./... | grep -v -e '/e2e$$' -e '/executor/cdp$$')
E2E_MATRIX ?= $(CURDIR)/bin/e2e-matrix.txt
E2E = CHROMEGATE_E2E_MATRIX=$(E2E_MATRIX) $(GO) test -race -count=1 -timeout 30m ./e2e/
test: deps realapps-deps mcpb-deps metrics-deps fleet-deps vet
	node --test extension/
	@mkdir -p bin && rm -f $(E2E_MATRIX)
	$(MAKE) --no-print-directory -j2 --output-sync=line test-lane-a test-lane-b
	@echo "== the e2e matrix, tests per backend:" && cat $(E2E_MATRIX)

test-lane-a:
	$(MAKE) --no-print-directory test-unit
	$(MAKE) --no-print-directory test-ext
	$(MAKE) --no-print-directory test-remote-endpoint

test-lane-b:
	$(MAKE) --no-print-directory test-unit-cdp
	$(MAKE) --no-print-directory test-cdp
	$(MAKE) --no-print-directory test-remote-server

test-unit:
	$(GO) test -race -count=1 -p 2 -timeout 20m $(UNIT_PKGS)

# executor/cdp's own tests, which start browsers.
test-unit-cdp:
	$(GO) test -race -count=1 -timeout 20m ./executor/cdp/

# The e2e suite on a Chromium chromegate launches (the default backend).
test-cdp:
	CHROMEGATE_E2E_BACKEND=cdp $(E2E)

# Through chromegate's extension loaded into the browser chromegate
# launches and paired over CDP (e2e/main_test.go).
test-ext:
	CHROMEGATE_E2E_BACKEND=ext $(E2E)

# Through remote browsers: a local `playwright run-server` (from the pinned
# playwright-core) joined with --browser-endpoint, and a bare Chromium
# attached with --cdp-endpoint.
test-remote: test-remote-server test-remote-endpoint

test-remote-server:
	CHROMEGATE_E2E_BACKEND=browser-server $(E2E)

test-remote-endpoint:
	CHROMEGATE_E2E_BACKEND=cdp-endpoint $(E2E)

# The conformance suite alone, at 2025-06-18, 2025-11-25 and 2026-07-28 (`make test`
# runs it in the e2e suite on the launched browser).
conformance: conformance-deps
	CI=true $(GO) test -race -count=1 -timeout 10m -run '^TestConformance$$' -v ./e2e/

# Every parser's fuzz target, briefly (longer: make fuzz FUZZTIME=5m).
FUZZTIME ?= 10s
# A target that fails is run once more: an input that crashed it was saved
# under testdata/fuzz and is replayed first, so a real failure fails again,
# while Go's own "context deadline exceeded" at the end of -fuzztime, with
# no input at fault, does not.
FUZZ_ONE = fz() { echo "go test -run '^$$' -fuzz '$$1' -fuzztime $(FUZZTIME) $$2"; $(GO) test -run '^$$' -fuzz "$$1" -fuzztime $(FUZZTIME) "$$2" || { echo "== $$1 failed; once more"; $(GO) test -run '^$$' -fuzz "$$1" -fuzztime $(FUZZTIME) "$$2"; }; }; fz
fuzz:
	@$(FUZZ_ONE) '^FuzzParseTarget$$' ./policy/
	@$(FUZZ_ONE) '^FuzzMatch$$' ./policy/hostname/
	@$(FUZZ_ONE) '^FuzzSanitizeFilename$$' ./executor/
	@$(FUZZ_ONE) '^FuzzNormalizeSchema$$' ./executor/
	@$(FUZZ_ONE) '^FuzzSafeJoin$$' ./executor/cdp/
	@$(FUZZ_ONE) '^FuzzResultData$$' ./mcp/
	@$(FUZZ_ONE) '^FuzzErrorJSON$$' ./executor/
	@$(FUZZ_ONE) '^FuzzNormalOrigin$$' ./mcp/httpapi/
	@$(FUZZ_ONE) '^FuzzDecodeFrame$$' ./executor/ext/wire/
	@$(FUZZ_ONE) '^FuzzParsePlugin$$' ./mcp/
	@$(FUZZ_ONE) '^FuzzPolicyInput$$' ./policy/
	@$(FUZZ_ONE) '^FuzzParseRefs$$' ./mcp/vault/
	@$(FUZZ_ONE) '^FuzzSecretRuns$$' ./mcp/vault/
	@$(FUZZ_ONE) '^FuzzTenantDir$$' ./executor/
	@# the secret property over the browser, with a random seed
	@seed=$$(od -An -N4 -tu4 /dev/urandom | tr -d ' '); echo "TestSecretEditsProperty CHROMEGATE_FUZZ_SEED=$$seed"; \
	  CI=true CHROMEGATE_FUZZ_SEED=$$seed $(GO) test -count=1 -run '^TestSecretEditsProperty$$' ./e2e/
	@$(FUZZ_ONE) '^FuzzDiffOutlines$$' ./helpers/
	@$(FUZZ_ONE) '^FuzzRESTCommand$$' ./mcp/httpapi/
	@$(FUZZ_ONE) '^FuzzPageToolPath$$' ./mcp/
	@$(FUZZ_ONE) '^FuzzCheckSelector$$' ./executor/
	@$(FUZZ_ONE) '^FuzzParse$$' ./mcp/statefile/
	@$(FUZZ_ONE) '^FuzzPDFPageCount$$' ./executor/
	@$(FUZZ_ONE) '^FuzzStackLocation$$' ./executor/

# The fault and load suite at length: every fault, and the soak of
# LOAD_SESSIONS concurrent HTTP sessions for LOAD_DURATION against the
# launcher and a local playwright run-server, with leak counts. `make test`
# runs the faults, not the soak (TestLoad is long: testkit.Long), repeats
# each case of TestChangesLanding 5 times, not 20, and floods the console
# with 20,000 messages, not 100,000 (TestConsoleIsBounded), and outlines a
# select of 20,000 options, not 100,000 (TestSnapshotExpandIsBounded).
LOAD_SESSIONS ?= 16
LOAD_DURATION ?= 3m
fault: deps
	CHROMEGATE_E2E_LONG=1 CHROMEGATE_LOAD_SESSIONS=$(LOAD_SESSIONS) CHROMEGATE_LOAD_DURATION=$(LOAD_DURATION) \
	  $(GO) test -count=1 -timeout 60m -v -run '^(TestLoad|TestFault.*|TestBrowserKilled|TestProtocolAbuse.*|TestBadInput|TestChangesLanding|TestConsoleIsBounded|TestSnapshotExpandIsBounded)$$' ./e2e/

# Sessions this machine holds: p50/p95, calls/s and RSS for N concurrent
# HTTP sessions (SWEEP sizes, SWEEP_ROUNDS rounds each).
SWEEP ?= 1,2,4,8,16,24,32
SWEEP_ROUNDS ?= 10
sweep: deps
	CHROMEGATE_SWEEP=$(SWEEP) $(GO) test -run '^$$' -bench '^BenchmarkSessions$$' -benchtime $(SWEEP_ROUNDS)x -timeout 60m ./e2e/

# The code one click by ref runs, from the tool's declaration to the
# browser: files, functions and statements, counted from coverage counters
# (e2e/bench/callpath_test.go), the same way every time.
callpath: deps
	$(GO) test -tags callpath -run '^TestCallPath$$' -count=1 -v ./e2e/bench/

bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 30x ./e2e/ ./mcp/ ./mcp/httpapi/ ./policy/ ./cmd/chromegate/internal/tracing/

clean:
	rm -rf bin demo-out dist

# chromegate against Playwright MCP and Chrome DevTools MCP (installed from
# npm into chromegate's cache dir, no browser downloaded), same Chromium,
# same pages. Not part of `make test`: it takes minutes.
bench-peers: deps
	$(GO) test -tags peers -run '^(TestPeers|TestPeersAnswers|TestPeersFacts|TestCompare|TestPeersPerCall|TestPeersColdStart|TestPeersLoad)$$' -count=1 -timeout 60m -v ./e2e/bench/

# What the egress boundary costs a page load: navigate median and p90 with
# the boundary (proxy), without it, by routing, and Playwright MCP with and
# without --allowed-origins, on the documentation pages and a page of 300
# subresources, interleaved in one run (EGRESS_ROUNDS rounds), with the
# request cache's hit rate. Peers from npm as for bench-peers.
EGRESS_ROUNDS ?= 11
bench-egress: deps
	$(GO) test -run '^$$' -bench '^BenchmarkProxy$$' -benchtime 2s ./executor/egress/
	$(GO) test -run '^$$' -bench '^BenchmarkDecideRequest$$' ./policy/
	CHROMEGATE_EGRESS_ROUNDS=$(EGRESS_ROUNDS) $(GO) test -tags peers -run '^TestEgressCost$$' -count=1 -timeout 20m -v ./e2e/bench/
