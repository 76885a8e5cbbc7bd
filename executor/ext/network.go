package ext

import (
	"context"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/ext/wire"
)

// The network log of a tab the extension drives is kept by the extension
// (extension/netlog.js, from the Network domain of its chrome.debugger
// session). The extension redacts credential headers and refuses bodies of
// requests that did not complete; the rules are applied here once more, so
// that nothing the wire carries reaches a caller unredacted.

// Network implements executor.Executor.
func (e *Executor) Network(ctx context.Context, p executor.NetworkParams) (executor.NetworkLog, error) {
	out, err := do[executor.NetworkLog](ctx, e, wire.MethodNetwork, &p.TabID, &p)
	if err != nil {
		return out, err
	}
	if out.Requests == nil {
		out.Requests = []executor.NetworkRequest{}
	}
	for i := range out.Requests {
		r := &out.Requests[i]
		r.URL = executor.RedactURL(r.URL)
		r.RequestHeaders, r.ResponseHeaders = nil, nil
	}
	return out, nil
}

// NetworkEntry implements executor.Executor.
func (e *Executor) NetworkEntry(ctx context.Context, p executor.NetworkEntryParams) (executor.NetworkEntry, error) {
	out, err := do[executor.NetworkEntry](ctx, e, wire.MethodNetworkEntry, &p.TabID, &p)
	if err != nil {
		return out, err
	}
	r := &out.Request
	r.URL = executor.RedactURL(r.URL)
	r.RequestHeaders = executor.RedactHeaders(r.RequestHeaders)
	r.ResponseHeaders = executor.RedactHeaders(r.ResponseHeaders)
	max := p.MaxBody
	if max <= 0 || max > executor.MaxBodyBytes {
		max = executor.MaxBodyBytes
	}
	switch {
	case !p.Body || r.Outcome != executor.OutcomeAllowed:
		out.Body, out.BodyTruncated = "", false
		if p.Body && out.BodyNote == "" {
			out.BodyNote = "no body: the request was " + r.Outcome
		}
	case len(out.Body) > max:
		out.Body, out.BodyTruncated, _, _ = executor.TextBody("", []byte(out.Body), max)
	}
	return out, nil
}
