package cdp

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"

	"github.com/playwright-community/playwright-go"

	"github.com/chromegate/chromegate/executor"
)

// Emulation is per session: Emulate sends the Emulation and Network
// commands to every tab through a CDP session of chromegate's own on the
// tab's target (an override there outlives the target's navigations,
// cross-site ones included, since the page target stays), and register
// sends them to every tab that appears later — a tab_new before it
// returns, a popup as soon as Playwright reports it (a popup's first
// document may have started loading by then; its next one has the
// emulation). Geolocation is granted to one origin, the page the caller
// was allowed to emulate on, never to the context as a whole.

var _ executor.Emulator = (*Session)(nil)

// emuState is a session's emulation and the lock that orders its
// changes. mu is held across CDP calls: no Playwright event handler
// takes it (popups are emulated from a goroutine of their own).
type emuState struct {
	mu  sync.Mutex
	cur executor.Emulation
	// geoGranted is the origin the geolocation permission was granted to.
	geoGranted string
}

// tabEmu is a tab's CDP session for emulation, made on first use.
type tabEmu struct {
	mu   sync.Mutex
	sess playwright.CDPSession
}

// Emulate implements executor.Emulator.
func (s *Session) Emulate(ctx context.Context, p executor.EmulateParams) (executor.Emulation, error) {
	if p.Set == nil {
		s.emu.mu.Lock()
		defer s.emu.mu.Unlock()
		return s.emu.cur, nil
	}
	e := *p.Set
	if err := e.Validate(); err != nil {
		return executor.Emulation{}, err
	}
	if _, err := s.resolveTab(p.TabID); err != nil {
		return executor.Emulation{}, err
	}
	return await(ctx, s, "emulate", func() (executor.Emulation, error) {
		s.emu.mu.Lock()
		defer s.emu.mu.Unlock()
		e.GeoOrigin = ""
		if e.Geolocation != nil && s.ownsCtx {
			e.GeoOrigin = p.Origin
		}
		if err := s.grantGeolocation(e.GeoOrigin); err != nil {
			return executor.Emulation{}, err
		}
		s.mu.Lock()
		tabs := append([]*tab(nil), s.order...)
		s.mu.Unlock()
		for _, t := range tabs {
			if t.page.IsClosed() {
				continue
			}
			if err := t.applyEmulation(e); err != nil {
				if t.page.IsClosed() {
					continue
				}
				// What was applied stays reported: a half-applied emulation
				// is worse than one the caller can see and reset.
				s.emu.cur = e
				return executor.Emulation{}, emulationErr(err)
			}
		}
		s.emu.cur = e
		return e, nil
	})
}

// emulateNew applies the session's emulation to a tab that just appeared.
func (s *Session) emulateNew(t *tab) {
	s.emu.mu.Lock()
	defer s.emu.mu.Unlock()
	if s.emu.cur.IsZero() || t.page.IsClosed() {
		return
	}
	if err := t.applyEmulation(s.emu.cur); err != nil && !t.page.IsClosed() {
		s.log.Warn("emulating on a new tab", "tab", t.raw, "err", err)
	}
}

// trustworthyOrigin says whether the browser gives an origin's pages a
// position at all: the origin of a secure context (https, wss, localhost
// and its subdomains, a loopback address). Checked here rather than left
// to the grant, which a headless shell accepts for any origin while the
// page still gets no position.
func trustworthyOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "https", "wss":
		return true
	case "http", "ws":
		h := strings.ToLower(u.Hostname())
		if h == "localhost" || strings.HasSuffix(h, ".localhost") {
			return true
		}
		ip := net.ParseIP(h)
		return ip != nil && ip.IsLoopback()
	}
	return false
}

// grantGeolocation grants the geolocation permission to origin alone,
// taking it from the origin that had it; the clipboard grants stay. Only
// in a context chromegate created: the permissions of a context it
// attached to (a browser's default context over CDP) are the user's, not
// touched (its pages ask as usual), and GeoOrigin stays empty.
func (s *Session) grantGeolocation(origin string) error {
	if !s.ownsCtx || origin == s.emu.geoGranted {
		return nil
	}
	if origin != "" && origin != "null" && !trustworthyOrigin(origin) {
		return executor.Errorf(executor.CodeBadArgs, "emulate: a position can be given only to a secure page (https, or localhost), not %s", origin).
			WithHint("the browser gives no position to an http page; emulate it on an https page")
	}
	if s.emu.geoGranted != "" {
		if err := s.bctx.ClearPermissions(); err != nil {
			return s.mapErr("emulate", err)
		}
		s.emu.geoGranted = ""
		s.mu.Lock()
		clip := make([]string, 0, len(s.granted))
		for o := range s.granted {
			clip = append(clip, o)
		}
		s.mu.Unlock()
		for _, o := range clip {
			if err := s.bctx.GrantPermissions([]string{"clipboard-read", "clipboard-write"},
				playwright.BrowserContextGrantPermissionsOptions{Origin: playwright.String(o)}); err != nil {
				s.log.Debug("granting clipboard permissions again", "origin", o, "err", err)
			}
		}
	}
	if origin == "" || origin == "null" {
		return nil
	}
	if err := s.bctx.GrantPermissions([]string{"geolocation"},
		playwright.BrowserContextGrantPermissionsOptions{Origin: playwright.String(origin)}); err != nil {
		if strings.Contains(err.Error(), "can't be granted") {
			return executor.Errorf(executor.CodeBadArgs, "emulate: a position can be given only to a secure page (https, or localhost), not %s", origin).
				WithHint("the browser gives no position to an http page; emulate it on an https page").Wrap(err)
		}
		return s.mapErr("emulate", err)
	}
	s.emu.geoGranted = origin
	return nil
}

// session returns the tab's emulation CDP session, creating it.
func (t *tab) emuSession() (playwright.CDPSession, error) {
	t.emu.mu.Lock()
	defer t.emu.mu.Unlock()
	if t.emu.sess != nil {
		return t.emu.sess, nil
	}
	sess, err := t.page.Context().NewCDPSession(t.page)
	if err != nil {
		return nil, err
	}
	sess.OnClose(func(playwright.CDPSession) {
		t.emu.mu.Lock()
		if t.emu.sess == sess {
			t.emu.sess = nil
		}
		t.emu.mu.Unlock()
	})
	t.emu.sess = sess
	return sess, nil
}

// applyEmulation sends the whole of e to the tab: every override e sets,
// and the clearing of every one it leaves zero, so the result does not
// depend on what was emulated before.
func (t *tab) applyEmulation(e executor.Emulation) error {
	sess, err := t.emuSession()
	if err != nil {
		return err
	}
	if !e.HasMetrics() {
		// The context's own viewport (Playwright's, an override of the
		// same slot in the browser) is what "none" means here; clearing
		// would leave the bare window.
		if vs := t.page.ViewportSize(); vs != nil {
			e.Width, e.Height, e.DeviceScaleFactor = vs.Width, vs.Height, 1
		}
	}
	for _, c := range EmulationCommands(e) {
		if _, err := sess.Send(c.Method, c.Params); err != nil {
			return fmt.Errorf("%s: %w", c.Method, err)
		}
	}
	return nil
}

// Command is one CDP command.
type Command struct {
	Method string
	Params map[string]any
}

// EmulationCommands are the CDP commands that make a page emulate e from
// any previous state. The extension sends the same list
// (extension/emulate.js); a test keeps the two in step.
func EmulationCommands(e executor.Emulation) []Command {
	var cmds []Command
	add := func(m string, p map[string]any) { cmds = append(cmds, Command{m, p}) }
	if e.HasMetrics() {
		dsf := e.DeviceScaleFactor
		if dsf == 0 {
			dsf = 1
		}
		add("Emulation.setDeviceMetricsOverride", map[string]any{
			"width": e.Width, "height": e.Height, "deviceScaleFactor": dsf, "mobile": e.Mobile,
			"screenWidth": e.Width, "screenHeight": e.Height,
		})
	} else {
		add("Emulation.clearDeviceMetricsOverride", map[string]any{})
	}
	touch := map[string]any{"enabled": e.Touch}
	if e.Touch {
		touch["maxTouchPoints"] = 5
	}
	add("Emulation.setTouchEmulationEnabled", touch)
	ua := map[string]any{"userAgent": e.UserAgent}
	if e.Locale != "" {
		ua["acceptLanguage"] = e.Locale
	}
	add("Emulation.setUserAgentOverride", ua)
	if g := e.Geolocation; g != nil {
		add("Emulation.setGeolocationOverride", map[string]any{"latitude": g.Latitude, "longitude": g.Longitude, "accuracy": g.Accuracy})
	} else {
		add("Emulation.clearGeolocationOverride", map[string]any{})
	}
	add("Emulation.setTimezoneOverride", map[string]any{"timezoneId": e.Timezone})
	if e.Locale != "" {
		add("Emulation.setLocaleOverride", map[string]any{"locale": e.Locale})
	} else {
		add("Emulation.setLocaleOverride", map[string]any{})
	}
	add("Emulation.setEmulatedMedia", map[string]any{"features": []map[string]any{
		{"name": "prefers-color-scheme", "value": e.ColorScheme},
		{"name": "prefers-reduced-motion", "value": e.ReducedMotion},
	}})
	rate := e.CPUThrottling
	if rate < 1 {
		rate = 1
	}
	add("Emulation.setCPUThrottlingRate", map[string]any{"rate": rate})
	n := executor.NetworkConditions{}
	if e.Network != nil {
		n = *e.Network
	}
	dl, ul := n.DownloadBps, n.UploadBps
	if dl == 0 {
		dl = -1
	}
	if ul == 0 {
		ul = -1
	}
	add("Network.emulateNetworkConditions", map[string]any{
		"offline": n.Offline, "latency": n.LatencyMs, "downloadThroughput": dl, "uploadThroughput": ul,
	})
	return cmds
}

// emulationErr turns a browser's refusal (an invalid timezone, say) into
// BAD_ARGS with its words.
func emulationErr(err error) error {
	msg := err.Error()
	if strings.Contains(msg, "Invalid") || strings.Contains(msg, "invalid") {
		return executor.Errorf(executor.CodeBadArgs, "emulate: the browser refused it: %s", msg).Wrap(err)
	}
	return executor.Errorf(executor.CodeInternal, "emulate: %s", msg).Wrap(err)
}
