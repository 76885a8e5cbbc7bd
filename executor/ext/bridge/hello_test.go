package bridge

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor/ext/internal/fakeext"
)

// hugeHello is an attacker's connection to the bridge: any local process,
// or another installed extension, can send a chrome-extension:// Origin. It
// upgrades, then sends one text frame that declares size bytes — a hello
// without a valid token — and streams it as fast as the bridge reads. It
// returns how many payload bytes the bridge took before it cut the
// connection off (size when it never did).
func hugeHello(t *testing.T, port int, size int64) int64 {
	t.Helper()
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 5*time.Second)
	if err != nil {
		t.Error(err)
		return 0
	}
	defer conn.Close()
	var key [16]byte
	_, _ = rand.Read(key[:])
	fmt.Fprintf(conn, "GET /ext HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nOrigin: chrome-extension://%s\r\n\r\n",
		port, base64.StdEncoding.EncodeToString(key[:]), fakeext.ID)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Errorf("upgrade: %v %v", resp, err)
		return 0
	}
	// FIN + text; masked, 64-bit length; a zero mask key, so the payload
	// goes as written.
	hdr := []byte{0x81, 0x80 | 127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint64(hdr[2:10], uint64(size))
	if _, err := conn.Write(hdr); err != nil {
		return 0
	}
	prefix := []byte(`{"v":1,"type":"hello","ext":{"id":"` + fakeext.ID + `"},"token":"`)
	if _, err := conn.Write(prefix); err != nil {
		return 0
	}
	filler := []byte(strings.Repeat("a", 64<<10)) // the token goes on
	sent := int64(len(prefix))
	for sent < size {
		_ = conn.SetWriteDeadline(time.Now().Add(3 * time.Second))
		n, err := conn.Write(filler[:min(int64(len(filler)), size-sent)])
		sent += int64(n)
		if err != nil {
			return sent
		}
	}
	return sent
}

// rss is the process's resident set, from /proc (0 where there is none).
func rss() int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestHelloIsSmall: a dozen connections that each send a 60 MiB hello
// without a valid token are cut off after a few KiB, before the token is
// checked; the bridge's memory stays flat, and the real extension still
// pairs afterwards. (Not parallel: it measures the process's memory.)
func TestHelloIsSmall(t *testing.T) {
	const conns, size = 12, 60 << 20
	b, _ := startBridge(t, func(o *Options) { o.HelloTimeout, o.MaxPending = 5*time.Second, conns })
	runtime.GC()
	before := rss()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		most int64
	)
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := hugeHello(t, b.Port(), size)
			mu.Lock()
			most = max(most, n)
			mu.Unlock()
		}()
	}
	wg.Wait()
	grew := rss() - before
	t.Logf("%d connections sending a %d MiB hello: the most one got through was %d KiB; the process's RSS grew by %d MiB",
		conns, size>>20, most>>10, grew>>20)
	// What a client got "through" includes what the kernel's socket
	// buffers took before the bridge closed: a few MiB on loopback.
	if most >= size {
		t.Errorf("a %d MiB hello was read whole (the most sent was %d bytes): the bridge read it before checking the token", size>>20, most)
	}
	if grew > 64<<20 {
		t.Errorf("the bridge's process grew by %d MiB under %d unauthenticated %d MiB hellos", grew>>20, conns, size>>20)
	}
	f := fakeext.Dial(t, b.Port(), fakeext.ID)
	f.Hello(fakeext.Token(t, b.opts.DataDir))
}

// TestPendingCapped: connections that upgrade and then say nothing hold
// the bridge's few unauthenticated slots only until HelloTimeout; past
// MaxPending a connection is refused before the upgrade, and once the
// silent ones are cut off the real extension pairs.
func TestPendingCapped(t *testing.T) {
	t.Parallel()
	b, _ := startBridge(t, func(o *Options) { o.MaxPending, o.HelloTimeout = 2, 500*time.Millisecond })
	upgrade := func() (net.Conn, int) {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", b.Port()), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		fmt.Fprintf(conn, "GET /ext HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: chrome-extension://%s\r\n\r\n", b.Port(), fakeext.ID)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		return conn, resp.StatusCode
	}
	for range 2 {
		if _, code := upgrade(); code != http.StatusSwitchingProtocols {
			t.Fatalf("a connection within MaxPending: %d", code)
		}
	}
	if _, code := upgrade(); code != http.StatusServiceUnavailable {
		t.Errorf("a connection past MaxPending: %d, want 503", code)
	}
	time.Sleep(time.Second) // the silent ones' hello timeout passes
	f := fakeext.Dial(t, b.Port(), fakeext.ID)
	f.Hello(fakeext.Token(t, b.opts.DataDir))
}
