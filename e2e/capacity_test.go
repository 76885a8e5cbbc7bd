package e2e

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// capacityRow is one size of a sessions sweep: what BenchmarkHTTPSessions
// and BenchmarkSessions measured with n concurrent sessions.
type capacityRow struct {
	n        int
	perSec   float64
	p50, p95 time.Duration
	pssKB    int // peak PSS of the server, driver and browser
}

// capacity is what a sweep says about sessions per machine: the largest
// size whose p95 stays within twice the p95 of one session ("held before
// p95 doubles"; the sizes measured bound it), and the PSS each session
// adds, from the slope between the smallest and the largest size.
func capacity(rows []capacityRow) (held int, pssPerSessionKB float64) {
	if len(rows) == 0 {
		return 0, 0
	}
	base := rows[0]
	for _, r := range rows {
		if r.p95 <= 2*base.p95 {
			held = r.n
		} else {
			break
		}
	}
	if last := rows[len(rows)-1]; last.n > base.n {
		pssPerSessionKB = float64(last.pssKB-base.pssKB) / float64(last.n-base.n)
	}
	return held, pssPerSessionKB
}

// printCapacity writes a sweep's table and its capacity line to stderr,
// one line a size, ready to paste.
func printCapacity(label string, rows []capacityRow) {
	var b strings.Builder
	fmt.Fprintf(&b, "CAPACITY %s\n", label)
	fmt.Fprintf(&b, "  sessions  calls/s    p50 ms    p95 ms  peak PSS MB\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "  %8d %8.1f %9.1f %9.1f %12.0f\n", r.n, r.perSec, ms(r.p50), ms(r.p95), float64(r.pssKB)/1024)
	}
	held, per := capacity(rows)
	fmt.Fprintf(&b, "  held before p95 doubles (vs %d session): %d sessions; PSS per added session: %.1f MB\n",
		rows[0].n, held, per/1024)
	fmt.Fprint(os.Stderr, b.String())
}
