package mcp

// Emulation: a device, position, locale, media, CPU or network for every
// tab of the session (emulate.go). The tool is one constructor: its
// declaration, its class, the facts the call path needs.

func emulateTool() *Tool {
	return &Tool{
		Name: "emulate", Title: "Emulate device and network",
		Output:      &Output{Value: emulationOut{}},
		Description: "Emulate a device (\"Pixel 7\", \"iPhone 13\", \"Desktop 1080p\"...), position, timezone, locale, media, CPU or network (offline, slow-3g, fast-3g, fast-4g) in every tab until reset. Merges; no arguments reports.",
		InputSchema: object(nil,
			prop{"device", str("")},
			prop{"width", integer("")}, prop{"height", integer("")},
			prop{"scale", number("")},
			prop{"mobile", boolean("")}, prop{"touch", boolean("")},
			prop{"user_agent", str("")},
			prop{"latitude", number("")}, prop{"longitude", number("")}, prop{"accuracy", number("")},
			prop{"timezone", str("")}, prop{"locale", str("")},
			prop{"color_scheme", enum("", "light", "dark", "no-preference")},
			prop{"reduced_motion", enum("", "reduce", "no-preference")},
			prop{"cpu_throttling", number("")},
			prop{"network", str("")},
			prop{"reset", boolean("")},
			tabIDProp()),
		// Not mutating as a class: a viewport or a dark scheme changes
		// nothing the user has. The policy makes the identity arguments
		// a mutation (chromegate.rego, "Emulation").
		ReadOnly: no(), Destructive: no(), Idempotent: true, Action: ActionInteract,
		Check:   checkEmulate,
		Handler: emulate,
	}
}
