package hostname

import (
	"strings"
	"testing"
)

var hostMatchCases = []struct {
	pattern, host string
	want          bool
}{
	{"example.com", "example.com", true},
	{"example.com", "EXAMPLE.COM", true},
	{"EXAMPLE.com.", "example.com.", true},
	{"example.com", "www.example.com", false},
	{"example.com", "notexample.com", false},
	{"example.com", "example.com.evil.test", false},
	{"*.example.com", "a.example.com", true},
	{"*.example.com", "a.b.c.example.com", true},
	{"*.Example.COM", "A.example.com", true},
	{"*.example.com", "example.com", false},
	{"*.example.com", "badexample.com", false},
	{"*.example.com", "a.example.com.evil.test", false},
	{"*.example.com", ".example.com", true}, // not a host the browser produces
	{"*", "example.com", true},
	{"*", "a.b.c", true},
	{"*", "localhost", true},
	{"api-*.example.com", "api-eu.example.com", true},
	{"api-*.example.com", "api-eu.x.example.com", false},
	{"*.b.*.com", "a.b.c.com", true},
	{"a?.com", "ab.com", false}, // only * is special
	{"a?.com", "a?.com", true},
	{"[ab].com", "a.com", false},
	{"{a,b}.com", "a.com", false},
	{`a\.com`, "a.com", false},
	{"bücher.de", "xn--bcher-kva.de", true},
	{"*.bücher.de", "shop.xn--bcher-kva.de", true},
	{"", "example.com", false},
	{"example.com", "", false},
	{"*", "", false},

	// Wildcards never match IP addresses; exact patterns do, in any spelling.
	{"*", "127.0.0.1", false},
	{"*", "[::1]", false},
	{"*.0.0.1", "127.0.0.1", false},
	{"*.1", "10.0.0.1", false},
	{"127.0.0.1", "127.0.0.1", true},
	{"::1", "[::1]", true},
	{"[::1]", "[::1]", true},
	{"[0:0::1]", "[::1]", true},
	{"0x7f.1", "127.0.0.1", true},
	{"169.254.169.254", "169.254.169.254", true},
}

func TestMatch(t *testing.T) {
	t.Parallel()
	for _, tt := range hostMatchCases {
		if got := Match(tt.pattern, tt.host); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.host, got, tt.want)
		}
	}
}

func FuzzMatch(f *testing.F) {
	for _, tt := range hostMatchCases {
		f.Add(tt.pattern, tt.host)
	}
	f.Fuzz(func(t *testing.T, pattern, host string) {
		got := Match(pattern, host)
		if got && strings.Contains(pattern, "*") && isIPLiteral(strings.TrimRight(strings.ToLower(host), ".")) {
			t.Fatalf("Match(%q, %q): a wildcard matched an address", pattern, host)
		}
		if Match(strings.ToUpper(pattern), strings.ToUpper(host)) != got && isASCII(pattern+host) {
			t.Fatalf("Match(%q, %q) depends on case", pattern, host)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
