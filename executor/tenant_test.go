package executor

import (
	"strings"
	"testing"
)

// No two principals share a directory, on any file system: the encoding
// is injective, keeps to a portable alphabet without case, and never
// ends in a dot or space.
func TestTenantDirIsInjectiveAndPortable(t *testing.T) {
	names := []string{"", "%", "alice", "alice.", "Alice", "ALICE", "alice..", ".alice", "a/b", "a\\b", "..", ".",
		"con", "CON", "con.txt", "nul", "com1", "lpt9", "%63on", "alice%2E", "alice ", "alice\x00",
		strings.Repeat("a", 79), strings.Repeat("a", 80), strings.Repeat("a", 81), strings.Repeat("a", 200),
		strings.Repeat("a", 200) + "b", strings.Repeat(".", 100), strings.Repeat(".", 101), "local", "local-http"}
	seen := map[string]string{}
	for _, n := range names {
		d := TenantDir(n)
		if prev, ok := seen[strings.ToLower(d)]; ok {
			t.Errorf("%q and %q share directory %q", prev, n, d)
		}
		seen[strings.ToLower(d)] = n
		if len(d) == 0 || len(d) > 80 || strings.ContainsAny(d, `/\:*?"<>|. `) || reservedDevice(strings.ToLower(d)) {
			t.Errorf("TenantDir(%q) = %q is not a portable directory name", n, d)
		}
	}
	for _, n := range []string{"alice", "ci-agent", "local", "bot_7"} {
		if d := TenantDir(n); d != n {
			t.Errorf("TenantDir(%q) = %q, want the name itself", n, d)
		}
	}
}

func FuzzTenantDir(f *testing.F) {
	f.Add("alice", "alice.")
	f.Add("con", "%63on")
	f.Fuzz(func(t *testing.T, a, b string) {
		if a != b && TenantDir(a) == TenantDir(b) {
			t.Errorf("%q and %q share %q", a, b, TenantDir(a))
		}
	})
}
