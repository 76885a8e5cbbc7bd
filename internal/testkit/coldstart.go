package testkit

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ColdPhases is where the time of one cold start of `chromegate serve`
// went, spawn to the first navigate's answer, read from the server's log
// (--log-level=debug) and the client's own clock. The phases partition the
// critical path, so their shares add up to the whole; Driver and Prep
// overlap (Prep ran while the driver started) and Prep is not a share.
type ColdPhases struct {
	Total   time.Duration // spawn until the first navigate returned
	Process time.Duration // exec, flags, the policy compiled: until the warm-up began
	Policy  time.Duration // of Process: compiling the policy
	Driver  time.Duration // what the launch waited for before the browser: the Playwright driver, until it answered
	Prep    time.Duration // Chromium's path, proxy, profile: beside the driver (in the sequential start: before it)
	Browser time.Duration // Chromium, until its CDP answered
	Context time.Duration // the default browser context
	First   time.Duration // the rest: the first tab and the navigate itself
	// Parallel is false when the server ran the sequential start-up
	// (CHROMEGATE_SEQUENTIAL_START=1).
	Parallel bool
}

var (
	startupLine = regexp.MustCompile(`msg=start-up .*since_exec_ms=(\d+) policy_ms=(\d+)`)
	startedLine = regexp.MustCompile(`msg="browser started" .*parallel=(\w+) total_ms=(\d+) find_ms=(\d+) prep_ms=(\d+) driver_ms=(\d+) browser_ms=(\d+) context_ms=(\d+)`)
)

// ParseColdPhases reads the phases from the log of a server spawned at
// spawn and whose first navigate returned at done.
func ParseColdPhases(log string, spawn, done time.Time) (ColdPhases, error) {
	p := ColdPhases{Total: done.Sub(spawn)}
	up := startupLine.FindStringSubmatch(log)
	st := startedLine.FindStringSubmatch(log)
	if up == nil || st == nil {
		return p, fmt.Errorf("the server's log has no start-up or browser-started line (run it with --log-level=debug):\n%s", tail(log, 2000))
	}
	ms := func(s string) time.Duration {
		n, _ := strconv.Atoi(s)
		return time.Duration(n) * time.Millisecond
	}
	// The server's clock starts when its package variables are set, a few
	// milliseconds after the exec: the line's own time says when the
	// warm-up began on the client's clock.
	upAt, err := lineTime(log, up[0])
	if err != nil {
		return p, err
	}
	p.Process = max(upAt.Sub(spawn), ms(up[1]))
	p.Policy = ms(up[2])
	p.Parallel = st[1] == "true"
	total := ms(st[2])
	p.Prep = ms(st[4])
	p.Browser = ms(st[6])
	p.Context = ms(st[7])
	p.First = max(p.Total-p.Process-total, 0)
	// On the path, the driver is what the launch waited for before the
	// browser: the rest of a driver started ahead (serve starts it before
	// the policy), or all of one started at the launch, with what ran
	// beside it or, in the sequential start-up, before it.
	p.Driver = max(total-p.Browser-p.Context, 0)
	return p, nil
}

// lineTime is the time= of the log line holding frag.
func lineTime(log, frag string) (time.Time, error) {
	for _, l := range strings.Split(log, "\n") {
		if !strings.Contains(l, frag) {
			continue
		}
		f, _, _ := strings.Cut(strings.TrimPrefix(l, "time="), " ")
		return time.Parse(time.RFC3339Nano, f)
	}
	return time.Time{}, fmt.Errorf("no log line holds %q", frag)
}

// Shares formats the phases as one line of shares of the whole, for a
// benchmark's output.
func (p ColdPhases) Shares() string {
	part := func(name string, d time.Duration) string {
		return fmt.Sprintf("%s %.0f ms (%.0f%%)", name, float64(d.Microseconds())/1000, 100*float64(d)/float64(max(p.Total, 1)))
	}
	return strings.Join([]string{
		part("process+flags+policy", p.Process),
		part("driver", p.Driver),
		part("browser", p.Browser),
		part("context", p.Context),
		part("first tab+navigate", p.First),
	}, " · ")
}

// MedianPhases is the run of ps whose total is the median: its phases
// partition its total, as the shares say.
func MedianPhases(ps []ColdPhases) ColdPhases {
	if len(ps) == 0 {
		return ColdPhases{}
	}
	s := slices.Clone(ps)
	slices.SortFunc(s, func(a, b ColdPhases) int { return cmp.Compare(a.Total, b.Total) })
	return s[len(s)/2]
}

// Percentile is the p-th percentile (0..1) of ds by the nearest rank below.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
