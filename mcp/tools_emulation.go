package mcp

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
		Description: "Emulate a device (\"Pixel 7\", \"iPhone 13\", \"Desktop 1080p\"...), position, timezone, locale, media, CPU or network (offline, slow-3g, fast-3g, fast-4g) in every tab until reset. Merges; no arguments reports.",
		// Not mutating as a class: a viewport or a dark scheme changes
		// nothing the user has. The policy makes the identity arguments
		// a mutation (chromegate.rego, "Emulation").
		ReadOnly: no(), Destructive: no(), Idempotent: true, Action: ActionInteract,
		Check: checkEmulate,
	}, emulate)
}
