package mcp

import (
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/chromegate/chromegate/executor"
)

// Network: a tab's requests, as the egress boundary decided them. Each
// tool is one constructor: its declaration, its class, the facts the call
// path needs; the handlers
// live with the feature (network.go).

// groupNetwork is the README row of these tools.
var groupNetwork = &ToolGroup{Name: "network log"}

func networkRequestsTool() *Tool {
	return newTool(Tool{
		Name: "network_requests", Title: "Network requests",
		Group:       groupNetwork,
		Output:      &Output{Value: networkRequestsOut{}},
		Description: "A tab's requests since its last navigation: id, method, url, type, status, size, duration_ms, outcome (allowed|denied|failed|pending), the policy's reason if denied. Filter by url substring, types, outcome; page by offset/limit.",
		ReadOnly:    yes(), Idempotent: true, Action: ActionRead,
		CutHint: "filter by url, types or outcome, or pass a smaller limit",
	}, networkRequests)
}

// networkRequestsIn is network_requests' input: filters and a page of
// the log.
type networkRequestsIn struct {
	URL         string   `json:"url,omitempty"`
	Types       []string `json:"types,omitempty"`
	Outcome     string   `json:"outcome,omitempty"`
	Navigations int      `json:"navigations,omitempty"`
	Offset      int      `json:"offset,omitempty"`
	Limit       int      `json:"limit,omitempty"`
	tabIn
}

func (networkRequestsIn) shape(s *jsonschema.Schema) {
	setEnum(s, "types", resourceTypes...)
	setEnum(s, "outcome", executor.OutcomeAllowed, executor.OutcomeDenied, executor.OutcomeFailed, executor.OutcomePending)
	setRange(s, "navigations", 1, executor.MaxNetworkNavigations)
	setRange(s, "offset", 0, executor.MaxNetworkEntries)
	setRange(s, "limit", 1, maxNetLimit)
}

func networkRequestTool() *Tool {
	return newTool(Tool{
		Name: "network_request", Title: "Network request",
		Group:       groupNetwork,
		Output:      &Output{Value: networkRequestOut{}, Text: true},
		Description: "One request by id from network_requests: headers, credentials redacted; include_body adds the response text (max 64 KiB), never for denied or failed ones.",
		ReadOnly:    yes(), Idempotent: true, Action: ActionRead,
		CutHint: "pass a smaller max_bytes",
	}, networkRequest)
}

// networkRequestIn is network_request's input.
type networkRequestIn struct {
	ID          string `json:"id"`
	IncludeBody bool   `json:"include_body,omitempty"`
	MaxBytes    int    `json:"max_bytes,omitempty"`
	tabIn
}

func (networkRequestIn) shape(s *jsonschema.Schema) {
	setRange(s, "max_bytes", 1, executor.MaxBodyBytes)
}
