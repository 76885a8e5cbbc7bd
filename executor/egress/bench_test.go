package egress

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// BenchmarkProxy is the proxy's cost per plain-http request: a small
// response from a loopback origin fetched directly and through the proxy
// with an allow-all Decider, one request at a time and from every P at
// once (a page fetches its subresources in parallel). Connections are kept
// alive on both legs, as the browser and the proxy's transport keep them.
func BenchmarkProxy(b *testing.B) {
	body := []byte(".c{color:red}\n")
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}))
	b.Cleanup(origin.Close)

	allow := NewBoundary(DeciderFunc(func(context.Context, *Request) Verdict { return Verdict{Allow: true} }))
	p := NewProxy(allow, nil, nil)
	b.Cleanup(func() { _ = p.Close() })
	addr, stop, err := p.Listen("bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = stop() })
	pu, _ := url.Parse("http://" + addr)

	clients := map[string]*http.Client{
		"direct": {Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 10 * time.Second},
		"proxy":  {Transport: &http.Transport{Proxy: http.ProxyURL(pu), MaxIdleConnsPerHost: 64}, Timeout: 10 * time.Second},
	}
	get := func(b *testing.B, c *http.Client, u string) {
		resp, err := c.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	for _, name := range []string{"direct", "proxy"} {
		c := clients[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				get(b, c, origin.URL+"/s"+strconv.Itoa(i%300)+".css")
			}
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(3) // 6 requests in flight on 2 cores: Chromium's per-host limit
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					i++
					get(b, c, origin.URL+"/s"+strconv.Itoa(i%300)+".css")
				}
			})
		})
	}
}
