package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The expected hosts below agree with the WHATWG URL parser (Node's URL,
// which Chromium matches on these points), except that trailing dots are
// removed and IPv6 addresses are classified.
func TestParseTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Target
	}{
		// Case, default ports, userinfo, trailing dots.
		{"https://example.com/a", Target{"https://example.com/a", "https", "example.com", 443, IPClassUnresolved}},
		{"HTTP://EXAMPLE.COM.:80/a", Target{"http://example.com/a", "http", "example.com", 80, IPClassUnresolved}},
		{"http://example.com../", Target{"http://example.com/", "http", "example.com", 80, IPClassUnresolved}},
		{"http://user:pw@ex.com:8080/x", Target{"http://ex.com:8080/x", "http", "ex.com", 8080, IPClassUnresolved}},
		{"http://a@b@c.com/", Target{"http://c.com/", "http", "c.com", 80, IPClassUnresolved}},
		{"https://example.com:443/", Target{"https://example.com/", "https", "example.com", 443, IPClassUnresolved}},
		{"https://example.com:0443/", Target{"https://example.com/", "https", "example.com", 443, IPClassUnresolved}},
		{"https://example.com:8443", Target{"https://example.com:8443/", "https", "example.com", 8443, IPClassUnresolved}},
		{"http://example.com:/", Target{"http://example.com/", "http", "example.com", 80, IPClassUnresolved}},
		{"ws://example.com:80/s", Target{"ws://example.com/s", "ws", "example.com", 80, IPClassUnresolved}},
		{"wss://example.com/s", Target{"wss://example.com/s", "wss", "example.com", 443, IPClassUnresolved}},
		{"ftp://example.com/f", Target{"ftp://example.com/f", "ftp", "example.com", 21, IPClassUnresolved}},
		{"https://example.com/p?q=1#frag", Target{"https://example.com/p?q=1#frag", "https", "example.com", 443, IPClassUnresolved}},

		// Where the authority really ends.
		{"http://evil.com#@good.com/", Target{"http://evil.com/#@good.com/", "http", "evil.com", 80, IPClassUnresolved}},
		{`http://good.com\@evil.com/`, Target{"http://good.com/@evil.com/", "http", "good.com", 80, IPClassUnresolved}},
		{"http://good.com?@evil.com/", Target{"http://good.com/?@evil.com/", "http", "good.com", 80, IPClassUnresolved}},

		// Slashes, backslashes, whitespace and control characters.
		{`http:\\evil.com\a\b`, Target{"http://evil.com/a/b", "http", "evil.com", 80, IPClassUnresolved}},
		{"http:evil.com/a", Target{"http://evil.com/a", "http", "evil.com", 80, IPClassUnresolved}},
		{"http:/evil.com", Target{"http://evil.com/", "http", "evil.com", 80, IPClassUnresolved}},
		{"http:///evil.com/", Target{"http://evil.com/", "http", "evil.com", 80, IPClassUnresolved}},
		{"  \x00http://a.com/\t\x1f ", Target{"http://a.com/", "http", "a.com", 80, IPClassUnresolved}},
		{" ht\ttp://ex\nample.com/", Target{"http://example.com/", "http", "example.com", 80, IPClassUnresolved}},

		// IDNA and percent-encoding of the host.
		{"https://bücher.de/", Target{"https://xn--bcher-kva.de/", "https", "xn--bcher-kva.de", 443, IPClassUnresolved}},
		{"https://ＥＸＡＭＰＬＥ．com/", Target{"https://example.com/", "https", "example.com", 443, IPClassUnresolved}},
		{"http://%65xample.com/", Target{"http://example.com/", "http", "example.com", 80, IPClassUnresolved}},
		{"http://example.com%2e/", Target{"http://example.com/", "http", "example.com", 80, IPClassUnresolved}},
		{"http://a_b.example.com/", Target{"http://a_b.example.com/", "http", "a_b.example.com", 80, IPClassUnresolved}},

		// IPv4 in every form the browser accepts.
		{"http://127.0.0.1:8080/", Target{"http://127.0.0.1:8080/", "http", "127.0.0.1", 8080, IPClassLoopback}},
		{"http://2130706433/", Target{"http://127.0.0.1/", "http", "127.0.0.1", 80, IPClassLoopback}},
		{"http://0x7f.1/", Target{"http://127.0.0.1/", "http", "127.0.0.1", 80, IPClassLoopback}},
		{"http://127.1/", Target{"http://127.0.0.1/", "http", "127.0.0.1", 80, IPClassLoopback}},
		{"http://0177.0.0.1/", Target{"http://127.0.0.1/", "http", "127.0.0.1", 80, IPClassLoopback}},
		{"http://0x7F.0X0.0.1/", Target{"http://127.0.0.1/", "http", "127.0.0.1", 80, IPClassLoopback}},
		{"http://017700000001/", Target{"http://127.0.0.1/", "http", "127.0.0.1", 80, IPClassLoopback}},
		{"http://127.000.000.001/", Target{"http://127.0.0.1/", "http", "127.0.0.1", 80, IPClassLoopback}},
		{"http://127.0.0.1./", Target{"http://127.0.0.1/", "http", "127.0.0.1", 80, IPClassLoopback}},
		{"http://127.0.0.1../", Target{"http://127.0.0.1/", "http", "127.0.0.1", 80, IPClassLoopback}},
		{"http://%31%32%37.0.0.1/", Target{"http://127.0.0.1/", "http", "127.0.0.1", 80, IPClassLoopback}},
		{"http://１２７.0.0.1/", Target{"http://127.0.0.1/", "http", "127.0.0.1", 80, IPClassLoopback}},
		{"http://0/", Target{"http://0.0.0.0/", "http", "0.0.0.0", 80, IPClassLoopback}},
		{"http://0.0.0.0:8000/", Target{"http://0.0.0.0:8000/", "http", "0.0.0.0", 8000, IPClassLoopback}},
		{"http://1.256/", Target{"http://1.0.1.0/", "http", "1.0.1.0", 80, IPClassPublic}},
		{"http://8.8.8.8/", Target{"http://8.8.8.8/", "http", "8.8.8.8", 80, IPClassPublic}},

		// Classes.
		{"http://10.0.0.1/", Target{"http://10.0.0.1/", "http", "10.0.0.1", 80, IPClassPrivate}},
		{"http://172.16.5.4/", Target{"http://172.16.5.4/", "http", "172.16.5.4", 80, IPClassPrivate}},
		{"http://192.168.1.1/", Target{"http://192.168.1.1/", "http", "192.168.1.1", 80, IPClassPrivate}},
		{"http://100.64.0.1/", Target{"http://100.64.0.1/", "http", "100.64.0.1", 80, IPClassPrivate}},
		{"http://169.254.169.254/latest", Target{"http://169.254.169.254/latest", "http", "169.254.169.254", 80, IPClassLinkLocal}},
		{"http://localhost:3000/", Target{"http://localhost:3000/", "http", "localhost", 3000, IPClassLoopback}},
		{"http://LOCALHOST./", Target{"http://localhost/", "http", "localhost", 80, IPClassLoopback}},
		{"http://app.localhost/", Target{"http://app.localhost/", "http", "app.localhost", 80, IPClassLoopback}},
		{"http://localhost.example.com/", Target{"http://localhost.example.com/", "http", "localhost.example.com", 80, IPClassUnresolved}},

		// IPv6.
		{"http://[::1]:8080/", Target{"http://[::1]:8080/", "http", "[::1]", 8080, IPClassLoopback}},
		{"http://[0:0:0:0:0:0:0:1]/", Target{"http://[::1]/", "http", "[::1]", 80, IPClassLoopback}},
		{"http://[::]/", Target{"http://[::]/", "http", "[::]", 80, IPClassLoopback}},
		{"http://[::ffff:127.0.0.1]/", Target{"http://[::ffff:7f00:1]/", "http", "[::ffff:7f00:1]", 80, IPClassLoopback}},
		{"http://[::ffff:169.254.169.254]/", Target{"http://[::ffff:a9fe:a9fe]/", "http", "[::ffff:a9fe:a9fe]", 80, IPClassLinkLocal}},
		{"http://[64:ff9b::7f00:1]/", Target{"http://[64:ff9b::7f00:1]/", "http", "[64:ff9b::7f00:1]", 80, IPClassLoopback}},
		{"http://[fe80::1]/", Target{"http://[fe80::1]/", "http", "[fe80::1]", 80, IPClassLinkLocal}},
		{"http://[FC00::1]/", Target{"http://[fc00::1]/", "http", "[fc00::1]", 80, IPClassPrivate}},
		{"http://[2606:4700::1111]/", Target{"http://[2606:4700::1111]/", "http", "[2606:4700::1111]", 80, IPClassPublic}},
		{"http://[1:0:0:2:0:0:0:3]/", Target{"http://[1:0:0:2::3]/", "http", "[1:0:0:2::3]", 80, IPClassPublic}},

		// Schemes without a host, or that policy never lets through.
		{"about:blank", Target{"about:blank", "about", "", 0, IPClassNone}},
		{"ABOUT:blank", Target{"about:blank", "about", "", 0, IPClassNone}},
		{"data:text/html,x", Target{"data:text/html,x", "data", "", 0, IPClassNone}},
		{"javascript:alert(1)", Target{"javascript:alert(1)", "javascript", "", 0, IPClassNone}},
		{"JaVa\tScRiPt:alert(1)", Target{"javascript:alert(1)", "javascript", "", 0, IPClassNone}},
		{"javascript://%0aalert(1)", Target{"javascript://%0aalert(1)", "javascript", "", 0, IPClassNone}},
		{"file:///etc/passwd", Target{"file:///etc/passwd", "file", "", 0, IPClassNone}},
		{"file://localhost/etc/passwd", Target{"file:///etc/passwd", "file", "", 0, IPClassNone}},
		{`file:\\server\share`, Target{"file://server/share", "file", "server", 0, IPClassUnresolved}},
		{"chrome://settings/passwords", Target{"chrome://settings/passwords", "chrome", "settings", 0, IPClassUnresolved}},
		{"chrome-extension://abcdef/popup.html", Target{"chrome-extension://abcdef/popup.html", "chrome-extension", "abcdef", 0, IPClassUnresolved}},
		{"devtools://devtools/bundled/inspector.html", Target{"devtools://devtools/bundled/inspector.html", "devtools", "devtools", 0, IPClassUnresolved}},
		{"view-source:https://example.com/", Target{"view-source:https://example.com/", "view-source", "", 0, IPClassNone}},
		{"blob:https://Example.com/uuid", Target{"blob:https://example.com/uuid", "blob", "example.com", 443, IPClassUnresolved}},
		{"blob:http://127.1:8000/uuid", Target{"blob:http://127.0.0.1:8000/uuid", "blob", "127.0.0.1", 8000, IPClassLoopback}},
		{"blob:null/uuid", Target{"blob:null/uuid", "blob", "", 0, IPClassNone}},
	}
	if len(tests) < 40 {
		t.Fatalf("only %d cases", len(tests))
	}
	for _, tt := range tests {
		got, err := ParseTarget(tt.in)
		if err != nil {
			t.Errorf("ParseTarget(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseTarget(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseTargetRejects(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"",
		"example.com",
		"//example.com/",
		"/relative",
		"http://",
		"http:///",
		"http://:80/",
		"http://1.2.3.4.5/",
		"http://256.0.0.1/",
		"http://0x100000000/",
		"http://4294967296/",
		"http://08.0.0.1/",
		"http://example.123/",
		"http://foo.09/",
		"http://a b.com/",
		"http://a<b.com/",
		"http://exa%00mple.com/",
		"http://%zz.com/%",
		"http://[::1/",
		"http://[::1%eth0]/",
		"http://[1.2.3.4]/",
		"http://[::ffff:01.1.1.1]/",
		"http://%5B::1%5D/",
		"http://example.com:65536/",
		"http://example.com:8x/",
		"http://xn--a.com/",
		"http://\xff.com/",
		"1http://example.com/",
		strings.Repeat("a", maxURLLength+1),
	} {
		if got, err := ParseTarget(in); err == nil || !errors.Is(err, ErrBadURL) {
			t.Errorf("ParseTarget(%q) = %+v, %v; want an ErrBadURL", clip(in), got, err)
		}
	}
}

func TestParseTargetErrorSaysHowToFixAMissingScheme(t *testing.T) {
	t.Parallel()
	_, err := ParseTarget("example.com/a")
	if err == nil || !strings.Contains(err.Error(), "https://example.com/a") {
		t.Fatalf("err = %v", err)
	}
}

func TestNewPageOrigins(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://example.com/a":         "https://example.com",
		"http://127.1:8080/":            "http://127.0.0.1:8080",
		"https://example.com:443/":      "https://example.com",
		"about:blank":                   "null",
		"data:text/html,x":              "null",
		"file:///etc/passwd":            "file://",
		"chrome://settings":             "chrome://settings",
		"blob:https://example.com/uuid": "https://example.com",
		"blob:http://a.test:81/uuid":    "http://a.test:81",
		"blob:null/uuid":                "null",
		"not a url":                     "null",
	} {
		if got := NewPage(in).Origin; got != want {
			t.Errorf("NewPage(%q).Origin = %q, want %q", in, got, want)
		}
	}
	if p := NewPage("::bad::"); p.URL != "::bad::" || p.Scheme != "" || p.IPClass != IPClassNone {
		t.Errorf("unparsable page = %+v", p)
	}
}

// FuzzParseTarget checks that ParseTarget never panics and that what it
// returns is already normal: a lower-case host without a trailing dot, a
// known class, and the same host, port and class when its URL is parsed
// again.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{
		"https://example.com/a", "http://2130706433/", "http://0x7f.1/", "http://127.1/",
		"http://[::ffff:127.0.0.1]/", "HTTP://EXAMPLE.COM.:80/", "https://bücher.de/",
		`http:\\evil.com\a`, "http://%31%32%37.0.0.1/", "http://a@b@c/", "about:blank",
		"blob:https://a.com/x", "javascript://%0aalert(1)", "file:///etc/passwd",
		"chrome://settings", "http://[1:0:0:2:0:0:0:3]/", "http://１２７.0.0.1/",
		"http://127.0.0.1../", "ws://x:0/", "http://xn--bcher-kva.de./",
	} {
		f.Add(s)
	}
	classes := map[string]bool{IPClassLoopback: true, IPClassPrivate: true, IPClassLinkLocal: true,
		IPClassPublic: true, IPClassUnresolved: true, IPClassNone: true}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := ParseTarget(raw)
		if err != nil {
			if !errors.Is(err, ErrBadURL) {
				t.Fatalf("ParseTarget(%q): error %v does not wrap ErrBadURL", raw, err)
			}
			return
		}
		if !classes[got.IPClass] {
			t.Fatalf("ParseTarget(%q): class %q", raw, got.IPClass)
		}
		if got.Scheme == "" || got.Scheme != strings.ToLower(got.Scheme) {
			t.Fatalf("ParseTarget(%q): scheme %q", raw, got.Scheme)
		}
		if got.Host != "" {
			if got.Host != strings.ToLower(got.Host) || strings.HasSuffix(got.Host, ".") {
				t.Fatalf("ParseTarget(%q): host %q not normalised", raw, got.Host)
			}
		}
		if (got.Host == "") != (got.IPClass == IPClassNone) {
			t.Fatalf("ParseTarget(%q): host %q with class %q", raw, got.Host, got.IPClass)
		}
		again, err := ParseTarget(got.URL)
		if err != nil {
			t.Fatalf("ParseTarget(%q) = %q, which does not parse again: %v", raw, got.URL, err)
		}
		if again.Host != got.Host || again.IPClass != got.IPClass || again.Port != got.Port || again.Scheme != got.Scheme {
			t.Fatalf("ParseTarget(%q) = %+v, but its URL parses as %+v", raw, got, again)
		}
	})
}
