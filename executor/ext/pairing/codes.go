package pairing

import (
	"crypto/rand"
	"strings"
	"time"
)

// Codes are single-use pairing codes: what `chromegate pair code` shows
// the user to type into the extension's popup. Only their hashes are kept.
//
// Codes is not safe for concurrent use: the bridge holds its lock.
type Codes struct {
	m map[[32]byte]time.Time
}

// Mint makes a code that expires after ttl ("ABCD-EFGH", no 0/O or 1/I),
// dropping the expired ones.
func (cs *Codes) Mint(ttl time.Duration) (string, time.Time) {
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789" // no 0/O, 1/I
	var raw [8]byte
	_, _ = rand.Read(raw[:])
	var sb strings.Builder
	for i, c := range raw {
		if i == 4 {
			sb.WriteByte('-')
		}
		sb.WriteByte(alphabet[int(c)%len(alphabet)])
	}
	code := sb.String()
	exp := time.Now().Add(ttl)
	if cs.m == nil {
		cs.m = map[[32]byte]time.Time{}
	}
	for k, t := range cs.m {
		if time.Now().After(t) {
			delete(cs.m, k)
		}
	}
	cs.m[TokenHash(normCode(code))] = exp
	return code, exp
}

// Use consumes a code: true once, for an unexpired code, however the user
// typed its case and spaces.
func (cs *Codes) Use(code string) bool {
	k := TokenHash(normCode(code))
	exp, ok := cs.m[k]
	if !ok {
		return false
	}
	delete(cs.m, k)
	return time.Now().Before(exp)
}

// Reset forgets every code (the kill switch).
func (cs *Codes) Reset() { cs.m = nil }

func normCode(c string) string {
	return strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(c), " ", ""))
}
