package executor

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
)

// Tenants share nothing by default. A server over HTTP serves several
// principals (a key each, and keyless loopback callers as one more); the
// files one of them makes or may read — downloads, PDFs, the upload
// directories set_files takes files from, records and saved states — live
// in a directory of that principal's own under each root, named by
// TenantDir. Stdio's principal, the machine's own user who runs the
// server, keeps each root's top level (Tenant ""), as before tenants.

// TenantDir is the directory name of principal's files under a root: an
// injective encoding safe on every file system, so that two principals
// never share a directory. Lower-case letters, digits, '-' and '_' stay;
// every other byte (an upper-case letter too, for file systems that fold
// case; a '.', which Windows trims from a name's end) is %XX. An empty
// name is "%"; a name whose encoding is long is cut and ends with a hash
// of the whole name; a name Windows reserves for a device (con, nul, …)
// has its first letter escaped.
func TenantDir(principal string) string {
	if principal == "" {
		return "%"
	}
	var b strings.Builder
	for i := 0; i < len(principal); i++ {
		c := principal[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
			b.WriteByte(c)
		default:
			b.WriteString("%" + strings.ToUpper(hex.EncodeToString([]byte{c})))
		}
	}
	s := b.String()
	if reservedDevice(s) {
		s = "%" + strings.ToUpper(hex.EncodeToString([]byte{s[0]})) + s[1:]
	}
	const maxLen = 80
	if len(s) > maxLen {
		sum := sha256.Sum256([]byte(principal))
		s = strings.TrimRight(s[:maxLen-17], "%0123456789ABCDEF") + "~" + hex.EncodeToString(sum[:8])
	}
	return s
}

// reservedDevice reports a name Windows gives to a device whatever its
// extension (CON, NUL, COM1…).
func reservedDevice(s string) bool {
	base, _, _ := strings.Cut(s, "%2E") // "con.txt" is CON too
	switch base {
	case "con", "prn", "aux", "nul":
		return true
	}
	return len(base) == 4 && (strings.HasPrefix(base, "com") || strings.HasPrefix(base, "lpt")) && base[3] >= '0' && base[3] <= '9'
}

// TenantRoot is principal's directory under root: root itself for Tenant
// "" (stdio's own user), root/TenantDir(tenant) otherwise.
func TenantRoot(root, tenant string) string {
	if tenant == "" {
		return root
	}
	return filepath.Join(root, TenantDir(tenant))
}

// TenantRoots is TenantRoot of each root.
func TenantRoots(roots []string, tenant string) []string {
	out := make([]string, len(roots))
	for i, r := range roots {
		out[i] = TenantRoot(r, tenant)
	}
	return out
}
