package executor

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
)

// Emulator is the optional capability of a backend that can change how a
// session's pages behave — viewport and device, user agent, geolocation,
// timezone, locale, media features, CPU and network throttling — without
// touching what is on them. Both built-in backends implement it; the
// server reports a backend without it as unsupported.
type Emulator interface {
	// Emulate applies p.Set to every tab of the session, and to every tab
	// opened later (popups included), until the next Emulate: it replaces
	// the whole emulation, a zero field meaning "the browser's own". A nil
	// Set only reports the emulation in force. p.TabID names the tab whose
	// page the caller decided on (geolocation is granted to its origin
	// only). Emulate must be safe for concurrent use.
	Emulate(ctx context.Context, p EmulateParams) (Emulation, error)
}

// EmulateParams replaces a session's emulation (Set), or reports it (nil).
type EmulateParams struct {
	TabID string     `json:"tabId,omitempty"`
	Set   *Emulation `json:"set,omitempty"`
	// Origin is the serialised origin of TabID's page, the one origin a
	// geolocation is granted to; the server fills it from the page it
	// decided on.
	Origin string `json:"origin,omitempty"`
}

// Emulation is what a session's pages are made to believe about their
// device and network. The zero value emulates nothing.
type Emulation struct {
	// Device is the preset the viewport fields came from (Devices), for
	// the report; the fields below are what is applied.
	Device string `json:"device,omitempty"`
	// Width and Height are the viewport in CSS pixels; zero keeps the
	// browser's. DeviceScaleFactor zero means 1 when a viewport is set.
	Width             int     `json:"width,omitempty"`
	Height            int     `json:"height,omitempty"`
	DeviceScaleFactor float64 `json:"deviceScaleFactor,omitempty"`
	Mobile            bool    `json:"mobile,omitempty"`
	Touch             bool    `json:"touch,omitempty"`
	UserAgent         string  `json:"userAgent,omitempty"`
	// Geolocation is the position navigator.geolocation reports; the
	// permission is granted to GeoOrigin only.
	Geolocation *Geolocation `json:"geolocation,omitempty"`
	GeoOrigin   string       `json:"geoOrigin,omitempty"`
	// Timezone is an IANA zone ("Europe/Berlin"); Locale a BCP 47 tag.
	Timezone string `json:"timezone,omitempty"`
	Locale   string `json:"locale,omitempty"`
	// ColorScheme is light, dark or no-preference; ReducedMotion reduce
	// or no-preference; empty keeps the browser's.
	ColorScheme   string `json:"colorScheme,omitempty"`
	ReducedMotion string `json:"reducedMotion,omitempty"`
	// CPUThrottling is the slowdown factor (1 = none).
	CPUThrottling float64 `json:"cpuThrottling,omitempty"`
	// Network is the conditions' preset name (NetworkPresets) or
	// "custom"; empty means no throttling.
	Network *NetworkConditions `json:"network,omitempty"`
}

// IsZero reports whether e emulates nothing.
func (e Emulation) IsZero() bool {
	return e.Width == 0 && e.Height == 0 && e.DeviceScaleFactor == 0 && !e.Mobile && !e.Touch &&
		e.UserAgent == "" && e.Geolocation == nil && e.Timezone == "" && e.Locale == "" &&
		e.ColorScheme == "" && e.ReducedMotion == "" && e.CPUThrottling <= 1 && e.Network == nil
}

// HasMetrics reports whether e overrides the device metrics.
func (e Emulation) HasMetrics() bool {
	return e.Width > 0 || e.Height > 0 || e.DeviceScaleFactor > 0 || e.Mobile
}

// Geolocation is a position in degrees, its accuracy in metres.
type Geolocation struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Accuracy  float64 `json:"accuracy"`
}

// NetworkConditions throttle a session's network in the browser: after
// the egress boundary decided each request, never instead of it. Offline
// only takes the network away.
type NetworkConditions struct {
	Preset  string `json:"preset"`
	Offline bool   `json:"offline,omitempty"`
	// LatencyMs is added to every request; DownloadBps and UploadBps are
	// bytes per second (0 = unlimited).
	LatencyMs   float64 `json:"latencyMs,omitempty"`
	DownloadBps float64 `json:"downloadBps,omitempty"`
	UploadBps   float64 `json:"uploadBps,omitempty"`
}

// NetworkPresets are the conditions a caller names: Chrome DevTools'
// throttling profiles, in bytes per second.
var NetworkPresets = map[string]NetworkConditions{
	"offline": {Preset: "offline", Offline: true},
	"slow-3g": {Preset: "slow-3g", LatencyMs: 2000, DownloadBps: 500 * 1000 * 0.8 / 8, UploadBps: 500 * 1000 * 0.8 / 8},
	"fast-3g": {Preset: "fast-3g", LatencyMs: 562.5, DownloadBps: 1.6 * 1000 * 1000 * 0.9 / 8, UploadBps: 750 * 1000 * 0.9 / 8},
	"fast-4g": {Preset: "fast-4g", LatencyMs: 165, DownloadBps: 9 * 1000 * 1000 * 0.9 / 8, UploadBps: 1.5 * 1000 * 1000 * 0.9 / 8},
}

// NetworkPresetNames lists NetworkPresets' names, sorted, plus "none".
func NetworkPresetNames() []string {
	n := []string{"none"}
	for k := range NetworkPresets {
		n = append(n, k)
	}
	slices.Sort(n[1:])
	return n
}

// Device is a named device preset: Playwright's device descriptors
// (playwright-core's deviceDescriptorsSource.json) for the phones and
// tablets, and plain desktop screens that keep the browser's user agent.
type Device struct {
	Width, Height     int
	DeviceScaleFactor float64
	Mobile, Touch     bool
	UserAgent         string
}

// Devices are the presets a caller names in emulate's device argument.
var Devices = map[string]Device{
	"iPhone 13":     {390, 664, 3, true, true, "Mozilla/5.0 (iPhone; CPU iPhone OS 15_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/15.0 Mobile/15E148 Safari/604.1"},
	"iPhone 15 Pro": {393, 659, 3, true, true, "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"},
	"Pixel 7":       {412, 839, 2.625, true, true, "Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/148.0.7778.96 Mobile Safari/537.36"},
	"Galaxy S9+":    {320, 658, 4.5, true, true, "Mozilla/5.0 (Linux; Android 8.0.0; SM-G965U Build/R16NW) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/148.0.7778.96 Mobile Safari/537.36"},
	"iPad Mini":     {768, 1024, 2, true, true, "Mozilla/5.0 (iPad; CPU OS 12_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/12.0 Mobile/15E148 Safari/604.1"},
	"Desktop 720p":  {1280, 720, 1, false, false, ""},
	"Desktop 1080p": {1920, 1080, 1, false, false, ""},
	"Desktop HiDPI": {1280, 720, 2, false, false, ""},
}

// DeviceNames lists Devices' names, sorted.
func DeviceNames() []string {
	var n []string
	for k := range Devices {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

// The bounds Validate keeps an emulation in.
const (
	MinViewport     = 100
	MaxViewportW    = 7680
	MaxViewportH    = 4320
	MaxScaleFactor  = 5
	MaxCPUThrottle  = 20
	MaxLatencyMs    = 60_000
	MaxUserAgentLen = 512
)

// MaxShotPixels is the most device pixels a capture may have (25 Mpx: a
// 5K viewport at scale 1, 2560x1440 at scale 2; 100 MB decoded as RGBA).
// Every image the server makes or decodes is bounded by it: a viewport
// (width x height x scale²) larger than this is refused by emulate, a
// full-page capture is cut to it, an element larger than it is refused,
// and a capture that comes back larger anyway is refused before it is
// decoded. It is what keeps one call from taking the server's memory.
const MaxShotPixels = 25_000_000

// ShotPixels is the device pixels of a w x h CSS-pixel capture at scale
// (zero meaning 1), as a float so that no product overflows.
func ShotPixels(w, h, scale float64) float64 {
	if scale <= 0 {
		scale = 1
	}
	return w * h * scale * scale
}

// FullPageClip is the part of a w x h CSS-pixel page a full-page capture
// at scale takes: at most limit high, at most MaxViewportW wide, and cut
// in height to stay within MaxShotPixels.
func FullPageClip(w, h, limit int, scale float64) (cw, ch int) {
	cw, ch = min(max(w, 1), MaxViewportW), min(max(h, 1), max(limit, 1))
	if n := ShotPixels(float64(cw), float64(ch), scale); n > MaxShotPixels {
		ch = max(1, int(float64(ch)*MaxShotPixels/n))
	}
	return cw, ch
}

// TooManyPixels is the BAD_ARGS error for a capture of n device pixels,
// over MaxShotPixels; what names what was asked for.
func TooManyPixels(what string, n float64) *Error {
	return Errorf(CodeBadArgs, "%s would be %.0f device pixels, over the limit of %d (%d Mpx) a capture may have",
		what, n, MaxShotPixels, MaxShotPixels/1_000_000)
}

var (
	timezoneRE = regexp.MustCompile(`^(UTC|GMT|[A-Za-z]+(?:[/_+-][A-Za-z0-9]+)*(?:/[A-Za-z0-9_+-]+)*)$`)
	localeRE   = regexp.MustCompile(`^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$`)
)

// Validate checks that e is something a browser can emulate, with
// BAD_ARGS errors that name the allowed values.
func (e Emulation) Validate() error {
	if err := e.ValidateValues(); err != nil {
		return err
	}
	if (e.Width == 0) != (e.Height == 0) {
		return Errorf(CodeBadArgs, "a viewport needs both width and height").WithHint("pass width and height, or a device")
	}
	if (e.DeviceScaleFactor != 0 || e.Mobile) && e.Width == 0 {
		return Errorf(CodeBadArgs, "scale and mobile need a viewport").WithHint("pass width and height, or a device")
	}
	if n := ShotPixels(float64(e.Width), float64(e.Height), e.DeviceScaleFactor); n > MaxShotPixels {
		sc := e.DeviceScaleFactor
		if sc == 0 {
			sc = 1
		}
		s := math.Floor(math.Sqrt(MaxShotPixels/float64(e.Width*e.Height))*100) / 100
		return TooManyPixels(fmt.Sprintf("a %dx%d viewport at scale %g (width x height x scale²)", e.Width, e.Height, sc), n).
			WithHint(fmt.Sprintf("lower the scale (at most %.2f for this viewport) or the width and height", s))
	}
	return nil
}

// ValidateValues checks each of e's fields on its own (a part of an
// emulation to be merged into another), not how they go together.
func (e Emulation) ValidateValues() error {
	bad := func(format string, a ...any) *Error {
		return Errorf(CodeBadArgs, format, a...)
	}
	if e.Width != 0 && (e.Width < MinViewport || e.Width > MaxViewportW) {
		return bad("width %d is out of range: %d to %d CSS pixels", e.Width, MinViewport, MaxViewportW)
	}
	if e.Height != 0 && (e.Height < MinViewport || e.Height > MaxViewportH) {
		return bad("height %d is out of range: %d to %d CSS pixels", e.Height, MinViewport, MaxViewportH)
	}
	if e.DeviceScaleFactor != 0 && (e.DeviceScaleFactor < 0.25 || e.DeviceScaleFactor > MaxScaleFactor) {
		return bad("scale %g is out of range: 0.25 to %d", e.DeviceScaleFactor, MaxScaleFactor)
	}
	if len(e.UserAgent) > MaxUserAgentLen || strings.ContainsAny(e.UserAgent, "\r\n\x00") {
		return bad("user_agent must be one line of at most %d bytes", MaxUserAgentLen)
	}
	if g := e.Geolocation; g != nil {
		if g.Latitude < -90 || g.Latitude > 90 || g.Longitude < -180 || g.Longitude > 180 || g.Accuracy < 0 || g.Accuracy > 100_000 {
			return bad("geolocation out of range: latitude -90 to 90, longitude -180 to 180, accuracy 0 to 100000 metres")
		}
	}
	if e.Timezone != "" && (len(e.Timezone) > 64 || !timezoneRE.MatchString(e.Timezone)) {
		return bad("timezone %q is not an IANA zone name", e.Timezone).WithHint(`for example "Europe/Berlin", "America/New_York", "UTC"`)
	}
	if e.Locale != "" && (len(e.Locale) > 35 || !localeRE.MatchString(e.Locale)) {
		return bad("locale %q is not a BCP 47 language tag", e.Locale).WithHint(`for example "de-DE", "en-GB", "ja"`)
	}
	if !slices.Contains([]string{"", "light", "dark", "no-preference"}, e.ColorScheme) {
		return bad("color_scheme %q is not one of light, dark, no-preference", e.ColorScheme)
	}
	if !slices.Contains([]string{"", "reduce", "no-preference"}, e.ReducedMotion) {
		return bad("reduced_motion %q is not one of reduce, no-preference", e.ReducedMotion)
	}
	if e.CPUThrottling != 0 && (e.CPUThrottling < 1 || e.CPUThrottling > MaxCPUThrottle) {
		return bad("cpu_throttling %g is out of range: 1 (none) to %d", e.CPUThrottling, MaxCPUThrottle)
	}
	if n := e.Network; n != nil {
		if n.LatencyMs < 0 || n.LatencyMs > MaxLatencyMs || n.DownloadBps < 0 || n.UploadBps < 0 {
			return bad("network conditions out of range: latency 0 to %d ms, throughput not negative", MaxLatencyMs)
		}
	}
	return nil
}

// UnknownDevice is the BAD_ARGS error for a device name not in Devices.
func UnknownDevice(name string) error {
	return Errorf(CodeBadArgs, "unknown device %q", name).
		WithHint(fmt.Sprintf("one of: %s", strings.Join(DeviceNames(), ", ")))
}

// UnknownNetwork is the BAD_ARGS error for a network preset not in
// NetworkPresets.
func UnknownNetwork(name string) error {
	return Errorf(CodeBadArgs, "unknown network conditions %q", name).
		WithHint(fmt.Sprintf("one of: %s", strings.Join(NetworkPresetNames(), ", ")))
}
