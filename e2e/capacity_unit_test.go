package e2e

import (
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
)

// TestCapacity: the sweep's summary reads the size held before p95 doubles
// and the PSS each added session costs.
func TestCapacity(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	rows := []capacityRow{
		{n: 1, p95: 100 * time.Millisecond, pssKB: 500 << 10},
		{n: 4, p95: 150 * time.Millisecond, pssKB: 600 << 10},
		{n: 16, p95: 200 * time.Millisecond, pssKB: 900 << 10},
		{n: 32, p95: 250 * time.Millisecond, pssKB: 1120 << 10},
	}
	held, per := capacity(rows)
	if held != 16 {
		t.Errorf("held %d, want 16 (32 sessions more than doubled p95)", held)
	}
	if want := float64(620<<10) / 31; per != want {
		t.Errorf("PSS per session %.0f kB, want %.0f", per, want)
	}
	if held, _ := capacity(rows[:1]); held != 1 {
		t.Errorf("one size: held %d, want 1", held)
	}
}
