package httpapi

import (
	"context"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/internal/testkit"
)

// BenchmarkSharedState is what the fleet's shared state costs one tool
// call, on the fake backend (the transport's and Redis's cost, not a
// browser's): a stateless 2026-07-28 call with a minted handle, by a key
// with a rate limit, on one server alone and on a replica of a fleet
// (the key confirmed from the shared copy, the rate charged in Redis, the
// session visited in the directory, an acting call's checkpoint sealed
// and stored). It reports the median and p95.
//
//	go test -run '^$' -bench SharedState -benchtime 2000x ./mcp/httpapi/
func BenchmarkSharedState(b *testing.B) {
	for _, mode := range []string{"alone", "fleet"} {
		for _, tool := range []string{"get_text", "click"} {
			b.Run(mode+"/"+tool, func(b *testing.B) {
				var e *httpEnv
				if mode == "fleet" {
					r := testkit.StartRedis(b)
					e = fleetEnvs(b, r, 1)[0]
				} else {
					e = newHTTPEnv(b, nil)
				}
				k := e.key(NewKey{Name: "k", Rate: "1000000/min"})
				time.Sleep(300 * time.Millisecond)
				status, hdr, body := e.do("POST", "/mcp/sessions", k, "", nil)
				if status != 201 {
					b.Fatalf("mint: %d %s", status, body)
				}
				cs, err := e.connectAt("2026-07-28", k, map[string]string{SessionHeader: hdr.Get(SessionHeader)})
				if err != nil {
					b.Fatal(err)
				}
				defer cs.Close()
				args := &sdk.CallToolParams{Name: tool, Arguments: map[string]any{}}
				if tool == "click" {
					args.Arguments = map[string]any{"selector": "#go"}
				}
				if _, err := cs.CallTool(context.Background(), args); err != nil {
					b.Fatal(err)
				}
				timeCalls(b, func() error {
					_, err := cs.CallTool(context.Background(), args)
					return err
				})
			})
		}
	}
}
