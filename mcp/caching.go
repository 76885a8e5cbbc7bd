package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// setCacheable gives the caching hints (protocol 2026-07-28: ttlMs and
// cacheScope) of server/discover, the list results and resources/read.
//
// What server/discover says (versions, capabilities, instructions) holds
// for as long as the server runs and is the same for every caller:
// public, ten minutes. Everything else is private (tools/list depends on
// who asks: their key's tool ACL and the policy's list phase) and is not
// to be cached on a timer (ttlMs 0): the lists carry the tools, prompts
// and resources that pages register, which come and go as tabs navigate,
// and a page resource is live data. A client that wants to skip
// re-listing opens subscriptions/listen instead: every change is sent
// there as list_changed, the moment it happens.
func setCacheable(_ context.Context, req sdk.Request, c *sdk.Cacheable) {
	if _, discover := req.(*sdk.ServerRequest[*sdk.DiscoverParams]); discover {
		*c = sdk.Cacheable{TTLMs: 10 * 60 * 1000, CacheScope: "public"}
		return
	}
	*c = sdk.Cacheable{TTLMs: 0, CacheScope: "private"}
}
