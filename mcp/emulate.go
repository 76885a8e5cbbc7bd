package mcp

import (
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/policy"
)

// emulate changes how a session's pages behave — device, position, clock,
// language, media features, CPU and network speed — not what is on them.
// It is one tool for all of it, like Chrome DevTools MCP's emulate, so
// the tools/list stays small; Playwright MCP's browser_resize is its
// width and height. The emulation is the session's: every tab has it,
// tabs opened later too, and it outlives navigations; reset ends it.
//
// The policy decides it as an interaction on the tab's page. Emulating a
// user agent or a position (a phone preset carries a user agent) is
// presenting another identity to a site the user may be logged in to —
// a site may log the session out, lock the account or act on a location
// — so the default policy makes those a mutation; the rest changes only
// how the page renders and runs.

// emulateArgs are emulate's arguments, its input type (emulateTool);
// a nil field was not given.
type emulateArgs struct {
	Device        *string  `json:"device,omitempty"`
	Width         *int     `json:"width,omitempty"`
	Height        *int     `json:"height,omitempty"`
	Scale         *float64 `json:"scale,omitempty"`
	Mobile        *bool    `json:"mobile,omitempty"`
	Touch         *bool    `json:"touch,omitempty"`
	UserAgent     *string  `json:"user_agent,omitempty"`
	Latitude      *float64 `json:"latitude,omitempty"`
	Longitude     *float64 `json:"longitude,omitempty"`
	Accuracy      *float64 `json:"accuracy,omitempty"`
	Timezone      *string  `json:"timezone,omitempty"`
	Locale        *string  `json:"locale,omitempty"`
	ColorScheme   *string  `json:"color_scheme,omitempty"`
	ReducedMotion *string  `json:"reduced_motion,omitempty"`
	CPUThrottling *float64 `json:"cpu_throttling,omitempty"`
	Network       *string  `json:"network,omitempty"`
	Reset         bool     `json:"reset,omitempty"`
	TabID         string   `json:"tab_id,omitempty"`
}

func (emulateArgs) shape(s *jsonschema.Schema) {
	setEnum(s, "color_scheme", "light", "dark", "no-preference")
	setEnum(s, "reduced_motion", "reduce", "no-preference")
}

// checkEmulate refuses, before the policy, what no backend could
// emulate, naming the allowed values.
func checkEmulate(args map[string]any) error {
	if d, ok := args["device"].(string); ok {
		if _, known := executor.Devices[d]; !known {
			return executor.UnknownDevice(d)
		}
	}
	if n, ok := args["network"].(string); ok && n != "none" {
		if _, known := executor.NetworkPresets[n]; !known {
			return executor.UnknownNetwork(n)
		}
	}
	_, lat := args["latitude"]
	_, long := args["longitude"]
	_, acc := args["accuracy"]
	if lat != long || (acc && !lat) {
		return executor.Errorf(executor.CodeBadArgs, "a position needs both latitude and longitude (accuracy is optional)")
	}
	// Each value on its own; how they go with what is set already is the
	// handler's to check.
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	var a emulateArgs
	if err := json.Unmarshal(b, &a); err != nil {
		return executor.Errorf(executor.CodeBadArgs, "arguments: %v", err)
	}
	return a.merge(executor.Emulation{}).ValidateValues()
}

// merge applies the arguments given to e: a device first, then the
// explicit fields over it.
func (a emulateArgs) merge(e executor.Emulation) executor.Emulation {
	if a.Reset {
		e = executor.Emulation{}
	}
	if a.Device != nil {
		d := executor.Devices[*a.Device]
		e.Device, e.Width, e.Height, e.DeviceScaleFactor, e.Mobile, e.Touch, e.UserAgent =
			*a.Device, d.Width, d.Height, d.DeviceScaleFactor, d.Mobile, d.Touch, d.UserAgent
	}
	set := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
			e.Device = ""
		}
	}
	set(&e.Width, a.Width)
	set(&e.Height, a.Height)
	if a.Scale != nil {
		e.DeviceScaleFactor, e.Device = *a.Scale, ""
	}
	if a.Mobile != nil {
		e.Mobile, e.Device = *a.Mobile, ""
	}
	if a.Touch != nil {
		e.Touch = *a.Touch
	}
	if a.UserAgent != nil {
		e.UserAgent = *a.UserAgent
	}
	if a.Latitude != nil && a.Longitude != nil {
		g := executor.Geolocation{Latitude: *a.Latitude, Longitude: *a.Longitude, Accuracy: 10}
		if a.Accuracy != nil {
			g.Accuracy = *a.Accuracy
		}
		e.Geolocation = &g
	}
	if a.Timezone != nil {
		e.Timezone = *a.Timezone
	}
	if a.Locale != nil {
		e.Locale = *a.Locale
	}
	if a.ColorScheme != nil {
		e.ColorScheme = *a.ColorScheme
	}
	if a.ReducedMotion != nil {
		e.ReducedMotion = *a.ReducedMotion
	}
	if a.CPUThrottling != nil {
		e.CPUThrottling = *a.CPUThrottling
	}
	if a.Network != nil {
		if n, ok := executor.NetworkPresets[*a.Network]; ok {
			e.Network = &n
		} else {
			e.Network = nil
		}
	}
	return e
}

// given reports whether the call changes anything.
func (a emulateArgs) given() bool {
	return a.Reset || a.Device != nil || a.Width != nil || a.Height != nil || a.Scale != nil || a.Mobile != nil ||
		a.Touch != nil || a.UserAgent != nil || a.Latitude != nil || a.Timezone != nil || a.Locale != nil ||
		a.ColorScheme != nil || a.ReducedMotion != nil || a.CPUThrottling != nil || a.Network != nil
}

func emulate(ctx context.Context, c *Call, a emulateArgs) (*Result, error) {
	em, ok := c.Executor().(executor.Emulator)
	if !ok {
		return nil, executor.Errorf(executor.CodeBadArgs, "the %s backend cannot emulate", c.Executor().Backend())
	}
	cur, err := em.Emulate(ctx, executor.EmulateParams{TabID: a.TabID})
	if err != nil {
		return nil, err
	}
	if !a.given() {
		return &Result{Value: emulationOf(cur)}, nil
	}
	next := a.merge(cur)
	if err := next.Validate(); err != nil {
		return nil, err
	}
	p := executor.EmulateParams{TabID: a.TabID, Set: &next}
	if a.Latitude != nil {
		// The position is granted to the page the policy decided on, and
		// to no other origin.
		if c.before == nil {
			return nil, executor.Errorf(executor.CodePolicyDenied, "emulate: the page a position would be granted to was not read for the decision; nothing was emulated")
		}
		p.Origin = policy.NewDocumentPage(c.before.URL, c.before.Origin).Origin
		if p.Origin == "" || p.Origin == "null" {
			return nil, executor.Errorf(executor.CodeBadArgs, "emulate: the page has no origin a position can be granted to").
				WithHint("navigate to an http or https page first")
		}
	} else if next.Geolocation != nil {
		p.Origin = cur.GeoOrigin
	}
	got, err := em.Emulate(ctx, p)
	if err != nil {
		return nil, err
	}
	return &Result{Value: emulationOf(got)}, nil
}

// emulationOut is emulate's result: what every tab of the session
// emulates now; an absent field is the browser's own.
type emulationOut struct {
	Device        string   `json:"device,omitempty"`
	Width         int      `json:"width,omitempty"`
	Height        int      `json:"height,omitempty"`
	Scale         float64  `json:"scale,omitempty"`
	Mobile        bool     `json:"mobile,omitempty"`
	Touch         bool     `json:"touch,omitempty"`
	UserAgent     string   `json:"user_agent,omitempty"`
	Latitude      *float64 `json:"latitude,omitempty"`
	Longitude     *float64 `json:"longitude,omitempty"`
	Accuracy      *float64 `json:"accuracy,omitempty"`
	GeoOrigin     string   `json:"geolocation_origin,omitempty"`
	Timezone      string   `json:"timezone,omitempty"`
	Locale        string   `json:"locale,omitempty"`
	ColorScheme   string   `json:"color_scheme,omitempty"`
	ReducedMotion string   `json:"reduced_motion,omitempty"`
	CPUThrottling float64  `json:"cpu_throttling,omitempty"`
	Network       string   `json:"network,omitempty"`
	// Note says "no emulation" when nothing is emulated.
	Note string `json:"note,omitempty"`
}

func emulationOf(e executor.Emulation) emulationOut {
	o := emulationOut{
		Device: e.Device, Width: e.Width, Height: e.Height, Scale: e.DeviceScaleFactor, Mobile: e.Mobile, Touch: e.Touch,
		UserAgent: e.UserAgent, Timezone: e.Timezone, Locale: e.Locale, ColorScheme: e.ColorScheme,
		ReducedMotion: e.ReducedMotion, CPUThrottling: e.CPUThrottling,
	}
	if g := e.Geolocation; g != nil {
		o.Latitude, o.Longitude, o.Accuracy, o.GeoOrigin = &g.Latitude, &g.Longitude, &g.Accuracy, e.GeoOrigin
	}
	if e.Network != nil {
		o.Network = e.Network.Preset
	}
	if e.IsZero() {
		o.Note = "no emulation: the browser's own device, position, clock, language, media and network"
	}
	return o
}

// Emulation: a device, position, locale, media, CPU or network for every
// tab of the session (emulate.go). The tool is one constructor: its
// declaration, its class, the facts the call path needs.

// groupEmulation is the README row of these tools.
var groupEmulation = &ToolGroup{Name: "emulation", Note: "[device, position, clock, network](#emulation-device-position-clock-network)"}

func emulateTool() *Tool {
	return newTool(Tool{
		Name: "emulate", Title: "Emulate device and network",
		Group:       groupEmulation,
		Output:      &Output{Value: emulationOut{}},
		Description: "Emulate in every tab, merging; reset clears: device (Pixel 7...), network (offline, slow-3g...), color_scheme. Also: width, height, scale, mobile, touch, user_agent, latitude, longitude, accuracy, timezone, locale, reduced_motion, cpu_throttling.",
		Rare:        []string{"width", "height", "scale", "mobile", "touch", "user_agent", "latitude", "longitude", "accuracy", "timezone", "locale", "reduced_motion", "cpu_throttling"},
		// Not mutating as a class: a viewport or a dark scheme changes
		// nothing the user has. The policy makes the identity arguments
		// a mutation (chromegate.rego, "Emulation").
		ReadOnly: no(), Destructive: no(), Idempotent: true, Action: ActionInteract,
		Check: checkEmulate,
	}, emulate)
}
