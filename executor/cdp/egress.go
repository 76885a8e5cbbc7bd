package cdp

import (
	"context"
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/chromegate/chromegate/executor/egress"
	"github.com/playwright-community/playwright-go"
)

// How a session's requests reach the boundary (Options.Egress):
//
//   - A browser on this machine — launched, or a browser server or CDP
//     endpoint on loopback — gets chromegate's egress proxy for every
//     context chromegate creates, one listener per session: the proxy
//     decides every request on the address it will connect to.
//   - A context the proxy cannot be given (an attached browser's own
//     context) or cannot reach (a browser on another machine) is guarded
//     by Playwright routing instead: every request, as Chromium's Fetch
//     domain pauses it, is decided on its URL (names unresolved).
const (
	guardNone  = ""
	guardProxy = egress.ViaProxy
	guardRoute = egress.ViaRoute
)

// egressOn reports whether requests are decided at all.
func (b *Backend) egressOn() bool { return b.opts.Egress.Enabled() }

// proxyReachable reports whether the browser can reach a proxy listening
// on this machine's loopback: it runs here.
func (b *Backend) proxyReachable() bool {
	ep := b.opts.CDPEndpoint
	if ep == "" {
		ep = b.opts.BrowserEndpoint
	}
	if ep == "" {
		return true
	}
	u, err := url.Parse(ep)
	if err != nil {
		return false
	}
	h := u.Hostname()
	ip := net.ParseIP(h)
	return h == "localhost" || ip != nil && ip.IsLoopback()
}

// egressArgs keep WebRTC's UDP inside the proxy.
func (b *Backend) egressArgs() []string {
	if !b.egressOn() {
		return nil
	}
	return []string{"--force-webrtc-ip-handling-policy=disable_non_proxied_udp"}
}

// startProxy starts the instance's egress proxy when its browser's contexts
// can use it.
func (in *instance) startProxy() error {
	b := in.b
	if !b.egressOn() || !b.proxyReachable() || b.opts.EgressVia == egress.ViaRoute {
		return nil
	}
	in.proxy = egress.NewProxy(b.opts.Egress, b.resolver, in.log)
	return nil
}

// proxyFor starts the session's proxy listener and returns the Playwright
// proxy setting that sends the context's requests to it, or nil when the
// instance has no proxy. Playwright adds <-loopback> to the bypass list,
// so loopback goes through the proxy too.
func (in *instance) proxyFor(session string) (*playwright.Proxy, error) {
	if in.proxy == nil {
		return nil, nil
	}
	addr, stop, err := in.proxy.Listen(session)
	if err != nil {
		return nil, err
	}
	in.mu.Lock()
	if old := in.proxyStops[session]; old != nil {
		defer func() { _ = old() }()
	}
	in.proxyStops[session] = stop
	in.mu.Unlock()
	p := &playwright.Proxy{Server: "http://" + addr}
	if len(in.b.opts.EgressBypass) > 0 {
		// Chromium reads bypass rules last to first: <-loopback> (which
		// Playwright would otherwise append, and which sends loopback
		// through the proxy) must come first, so that the listed
		// host:port pairs, read before it, still bypass.
		p.Bypass = playwright.String("<-loopback>," + strings.Join(in.b.opts.EgressBypass, ","))
	}
	return p, nil
}

// browserProxy is the proxy setting for a browser launched for contexts of
// its own (isolated): its own requests, made outside every context, go to
// a listener that refuses them all (egress.Proxy.ListenBrowser), so that
// one the quiet switches miss still does not leave. It lives as long as
// the instance's proxy. A persistent profile's browser has no such
// listener: its own requests share the default context's proxy, the
// only one it has, and are decided like the default session's.
func (in *instance) browserProxy() (*playwright.Proxy, error) {
	if in.proxy == nil {
		return nil, nil
	}
	addr, _, err := in.proxy.ListenBrowser()
	if err != nil {
		return nil, err
	}
	return &playwright.Proxy{Server: "http://" + addr}, nil
}

// stopProxy stops a session's listener.
func (in *instance) stopProxy(session string) {
	in.mu.Lock()
	stop := in.proxyStops[session]
	delete(in.proxyStops, session)
	in.mu.Unlock()
	if stop != nil {
		_ = stop()
	}
}

// routeGuard decides every request of a context through Playwright
// routing: for contexts the proxy does not reach. Routing sees the URL, the
// resource type and the frame, not the address.
func (in *instance) routeGuard(bctx playwright.BrowserContext, session string) error {
	b := in.b
	// WebSockets are not routed requests: Playwright hooks the page's
	// WebSocket constructor instead (pages and frames, not workers; the
	// README's table says so).
	err := bctx.RouteWebSocket(anyURL, func(ws playwright.WebSocketRoute) {
		er := egress.Request{Session: session, URL: ws.URL(), Method: "GET", ResourceType: "websocket", Via: egress.ViaRoute, Backend: "cdp"}
		in.resolveFor(&er)
		if v := b.opts.Egress.DecideRequest(context.Background(), &er); !v.Allow {
			ws.Close(playwright.WebSocketRouteCloseOptions{Code: playwright.Int(1008), Reason: playwright.String("blocked by chromegate's policy")})
			return
		}
		if _, err := ws.ConnectToServer(); err != nil {
			in.log.Debug("egress: websocket connect", "err", err)
		}
	})
	if err != nil {
		return err
	}
	return bctx.Route("**/*", func(r playwright.Route) {
		req := r.Request()
		er := egress.Request{
			Session: session, URL: req.URL(), Method: req.Method(), ResourceType: req.ResourceType(),
			Navigation: req.IsNavigationRequest(), Via: egress.ViaRoute, Backend: "cdp",
		}
		frameInfo(req, &er)
		in.resolveFor(&er)
		if v := b.opts.Egress.DecideRequest(context.Background(), &er); !v.Allow {
			_ = r.Abort("blockedbyclient")
			return
		}
		_ = r.Fallback()
	})
}

// resolveFor gives a routed request the address its host resolves to on
// this machine, when the browser runs here (a local CDP endpoint's own
// context): the policy then sees a name pointing inward as inward. The
// browser resolves the name again when it connects, so unlike the proxy
// this leaves a gap a rebinding DNS server could use; the README's table
// says so. A browser elsewhere resolves names in its own network, where
// this machine's answer means nothing: its requests stay unresolved.
func (in *instance) resolveFor(er *egress.Request) {
	if !in.b.proxyReachable() {
		return
	}
	host := egress.HostOf(er.URL)
	if host == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if addrs, err := in.b.resolver.Resolve(ctx, host); err == nil {
		er.Addr = addrs[0]
	}
}

// anyURL matches every URL for RouteWebSocket.
var anyURL = regexp.MustCompile(``)

// frameInfo fills the frame and page origins of a routed request. A
// service worker's request has no frame (Playwright then panics or errs).
func frameInfo(req playwright.Request, er *egress.Request) {
	defer func() { _ = recover() }()
	f := req.Frame()
	if f == nil {
		return
	}
	parent := f.ParentFrame()
	er.TopLevel = er.Navigation && parent == nil
	if !er.Navigation {
		er.FrameOrigin = originOf(f.URL())
	} else if parent != nil {
		er.FrameOrigin = originOf(parent.URL())
	}
	if p := f.Page(); p != nil {
		er.PageOrigin = originOf(p.MainFrame().URL())
	}
}
