package cdp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/chromegate/chromegate/executor"
)

// TestEmulationCommands writes (UPDATE_GOLDEN=1) and checks the commands
// of a few emulations; extension/emulate.test.js checks the extension's
// against the same file.
func TestEmulationCommands(t *testing.T) {
	t.Parallel()
	pixel := executor.Devices["Pixel 7"]
	slow := executor.NetworkPresets["slow-3g"]
	off := executor.NetworkPresets["offline"]
	cases := []struct {
		Name      string             `json:"name"`
		Emulation executor.Emulation `json:"emulation"`
		Commands  []Command          `json:"commands"`
	}{
		{Name: "none"},
		{Name: "a phone, dark, in Tokyo, slow", Emulation: executor.Emulation{
			Device: "Pixel 7", Width: pixel.Width, Height: pixel.Height, DeviceScaleFactor: pixel.DeviceScaleFactor,
			Mobile: true, Touch: true, UserAgent: pixel.UserAgent, Timezone: "Asia/Tokyo", Locale: "ja-JP",
			ColorScheme: "dark", ReducedMotion: "reduce", CPUThrottling: 4, Network: &slow,
		}},
		{Name: "a position, offline", Emulation: executor.Emulation{
			Geolocation: &executor.Geolocation{Latitude: 48.8584, Longitude: 2.2945, Accuracy: 25}, Network: &off,
		}},
		{Name: "a viewport alone", Emulation: executor.Emulation{Width: 500, Height: 400}},
	}
	for i := range cases {
		cases[i].Commands = EmulationCommands(cases[i].Emulation)
		if err := cases[i].Emulation.Validate(); err != nil {
			t.Fatalf("%s: %v", cases[i].Name, err)
		}
	}
	got, err := json.MarshalIndent(cases, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "emulation_commands.json")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to write it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-golden +now); if intended, rerun with UPDATE_GOLDEN=1:\n%s", path, diff)
	}
}

// BenchmarkExecutorEmulate is one emulate call on a session of one tab: a
// phone, dark, in Tokyo, on slow 3G, then back to nothing (each call
// sends the whole of its emulation: ten commands).
func BenchmarkExecutorEmulate(b *testing.B) {
	s, tab := benchTab(b, "/dialogs")
	ctx := benchCtx(b)
	pixel := executor.Devices["Pixel 7"]
	slow := executor.NetworkPresets["slow-3g"]
	phone := executor.Emulation{Device: "Pixel 7", Width: pixel.Width, Height: pixel.Height, DeviceScaleFactor: pixel.DeviceScaleFactor,
		Mobile: true, Touch: true, UserAgent: pixel.UserAgent, Timezone: "Asia/Tokyo", ColorScheme: "dark", Network: &slow}
	b.Cleanup(func() { _, _ = s.Emulate(benchCtx(b), executor.EmulateParams{TabID: tab, Set: &executor.Emulation{}}) })
	for b.Loop() {
		if _, err := s.Emulate(ctx, executor.EmulateParams{TabID: tab, Set: &phone}); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Emulate(ctx, executor.EmulateParams{TabID: tab, Set: &executor.Emulation{}}); err != nil {
			b.Fatal(err)
		}
	}
}
