package testkit

import (
	"strings"
	"testing"
	"time"
)

func TestParseColdPhases(t *testing.T) {
	spawn := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	log := strings.Join([]string{
		`time=2026-11-24T08:00:00.030Z level=INFO msg="extension bridge listening" addr=127.0.0.1:1`,
		`time=2026-11-24T08:00:00.040Z level=DEBUG msg=start-up since_exec_ms=35 policy_ms=20`,
		`time=2026-11-24T08:00:00.640Z level=INFO msg="browser started" attached=false persistent=false version=1 parallel=true total_ms=600 find_ms=0 prep_ms=3 driver_ms=350 browser_ms=230 context_ms=15`,
	}, "\n")
	p, err := ParseColdPhases(log, spawn, spawn.Add(900*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	want := ColdPhases{Total: 900 * time.Millisecond, Process: 40 * time.Millisecond, Policy: 20 * time.Millisecond,
		Driver: 355 * time.Millisecond, Prep: 3 * time.Millisecond, Browser: 230 * time.Millisecond, Context: 15 * time.Millisecond,
		First: 260 * time.Millisecond, Parallel: true}
	if p != want {
		t.Errorf("ParseColdPhases:\n got %+v\nwant %+v", p, want)
	}
	if s := p.Shares(); !strings.Contains(s, "driver 355 ms (39%)") || !strings.Contains(s, "first tab+navigate 260 ms (29%)") {
		t.Errorf("Shares: %s", s)
	}
	// A driver started ahead: the launch waited for its rest only.
	ahead := strings.Replace(log, "total_ms=600", "total_ms=400", 1)
	if p, _ := ParseColdPhases(ahead, spawn, spawn.Add(700*time.Millisecond)); p.Driver != 155*time.Millisecond || p.First != 260*time.Millisecond {
		t.Errorf("a driver started ahead: driver %v, first %v; want 155ms, 260ms", p.Driver, p.First)
	}
	if _, err := ParseColdPhases("no lines", spawn, spawn); err == nil {
		t.Error("a log without the lines parsed")
	}
}
