package vault

import (
	"encoding/base64"
	"encoding/json"
	"html"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// alphabets secrets are drawn from: the characters each URL encoder treats
// differently, quotes and markup, and letters outside ASCII.
var alphabets = []string{
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
	"abcdef0123456789",
	"abcXYZ019~*-._!'() +/=?&#%@:;,$\"<>{}`[]\\",
	"pass~*w0rd-2024 ",
	"aé€日本😀z9~",
}

// genSecret returns a secret of MinLength..90 characters of one alphabet.
func genSecret(r *rand.Rand) string {
	alpha := []rune(alphabets[r.IntN(len(alphabets))])
	n := MinLength + r.IntN(83)
	out := make([]rune, n)
	for i := range out {
		out[i] = alpha[r.IntN(len(alpha))]
	}
	return string(out)
}

// readerEncodings are the ways a reader can show a piece of a value: as it
// is, and as each encoder of a browser, a server or a log writes it.
var readerEncodings = map[string]func(string) string{
	"raw":       func(s string) string { return s },
	"form":      func(s string) string { return percent(s, alnumForTest+"*-._", true) },
	"component": func(s string) string { return percent(s, alnumForTest+"-_.!~*'()", false) },
	"uri":       func(s string) string { return percent(s, alnumForTest+"-_.!~*'();,/?:@&=+$#", false) },
	"query":     url.QueryEscape,
	"path":      url.PathEscape,
	"json": func(s string) string {
		b, _ := json.Marshal(s)
		return strings.Trim(string(b), `"`)
	},
	"html":         html.EscapeString,
	"base64":       func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
	"base64raw":    func(s string) string { return base64.RawStdEncoding.EncodeToString([]byte(s)) },
	"base64url":    func(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) },
	"base64urlraw": func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) },
}

const alnumForTest = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// checkRuns redacts a piece of secret (cut at any characters, at least
// RunLength of them, or edited: one character dropped inside) in each
// encoding, between surrounding texts, and fails if the result holds
// RunLength consecutive bytes of the encoded piece, or of the secret.
func checkRuns(t *testing.T, r *rand.Rand, secret, before, after string) {
	t.Helper()
	v, err := New(map[string]string{"S": secret})
	if err != nil {
		t.Fatal(err)
	}
	runes := []rune(secret)
	for range 20 {
		n := RunLength + r.IntN(len(runes)-RunLength+1)
		i := r.IntN(len(runes) - n + 1)
		piece := runes[i : i+n]
		if r.IntN(3) == 0 && n > 2*RunLength { // an edit: a character out
			j := RunLength + r.IntN(n-2*RunLength+1)
			piece = append(append([]rune{}, piece[:j]...), piece[j+1:]...)
		}
		for name, enc := range readerEncodings {
			shown := enc(string(piece))
			got := v.Redact(before + shown + after)
			got = strings.ReplaceAll(got, Shown("S"), "\x00")
			for _, whole := range []string{shown, secret} {
				for k := 0; k+RunLength <= len(whole); k++ {
					run := whole[k : k+RunLength]
					if !utf8.ValidString(run) && name == "raw" {
						continue // half a character: not a run of characters
					}
					if strings.Contains(got, run) && !strings.Contains(before+after, run) {
						t.Fatalf("secret %q, piece %q as %s: Redact left %q in %q", secret, string(piece), name, run, got)
					}
				}
			}
		}
	}
}

// TestSecretRuns is the property: for generated secrets, every cut and
// edited piece in every encoding is redacted down to fewer than RunLength
// characters. make test runs it with a fixed seed; FuzzSecretRuns (make
// fuzz) with the fuzzer's.
func TestSecretRuns(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(27, 27))
	for range 300 {
		checkRuns(t, r, genSecret(r), "text before ", " and after")
	}
}

func FuzzSecretRuns(f *testing.F) {
	f.Add(uint64(1), "p=", "&q=1")
	f.Add(uint64(2), "", "")
	f.Fuzz(func(t *testing.T, seed uint64, before, after string) {
		r := rand.New(rand.NewPCG(seed, seed>>1))
		checkRuns(t, r, genSecret(r), before, after)
	})
}

func TestRunsKeepText(t *testing.T) {
	t.Parallel()
	v, err := New(map[string]string{"K": "sk-ant-api03-Zq8vB2nR4tY6uI8oP0aS2dF4gH"})
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"nothing here": "nothing here",
		`value="sk-ant-api03-Zq8vB2nR4tY6uI8…"`: `value="<secret:K>…"`,
		"ends k-ant-api0":                       "ends <secret:K>",
		"five sk-an left":                       "five sk-an left",
		"already <secret:K> shown":              "already <secret:K> shown",
		"two sk-ant-api03 x Zq8vB2nR y":         "two <secret:K> x <secret:K> y",
	} {
		if got := v.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
		if got := v.Redact(v.Redact(in)); got != want {
			t.Errorf("Redact twice (%q) = %q, want %q", in, got, want)
		}
	}
}
