package mcp

import "github.com/chromegate/chromegate/executor"

// Network: a tab's requests, as the egress boundary decided them. Each tool is one constructor: its
// declaration, its class, the facts the call path needs; the handlers
// live with the feature (network.go).

func networkRequestsTool() *Tool {
	return &Tool{
		Name: "network_requests", Title: "Network requests",
		Output:      &Output{Value: networkRequestsOut{}},
		Description: "A tab's requests since its last navigation: id, method, url, type, status, size, duration_ms, outcome (allowed|denied|failed|pending), the policy's reason if denied. Filter by url substring, types, outcome; page by offset/limit.",
		InputSchema: object(nil,
			prop{"url", str("")},
			prop{"types", array("", enum("", resourceTypes...), 0)},
			prop{"outcome", enum("", executor.OutcomeAllowed, executor.OutcomeDenied, executor.OutcomeFailed, executor.OutcomePending)},
			prop{"navigations", intRange("", 1, executor.MaxNetworkNavigations)},
			prop{"offset", intRange("", 0, executor.MaxNetworkEntries)},
			prop{"limit", intRange("", 1, maxNetLimit)},
			tabIDProp()),
		ReadOnly: yes(), Idempotent: true, Action: ActionRead,
		CutHint: "filter by url, types or outcome, or pass a smaller limit",
		Handler: networkRequests,
	}
}

func networkRequestTool() *Tool {
	return &Tool{
		Name: "network_request", Title: "Network request",
		Output:      &Output{Value: networkRequestOut{}, Text: true},
		Description: "One request by id from network_requests: headers, credentials redacted; include_body adds the response text (max 64 KiB), never for denied or failed ones.",
		InputSchema: object([]string{"id"},
			prop{"id", str("")},
			prop{"include_body", boolean("")},
			prop{"max_bytes", intRange("", 1, executor.MaxBodyBytes)},
			tabIDProp()),
		ReadOnly: yes(), Idempotent: true, Action: ActionRead,
		CutHint: "pass a smaller max_bytes",
		Handler: networkRequest,
	}
}
