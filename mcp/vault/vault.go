// Package vault holds the secrets an operator declared for chromegate: their
// values, the origins each may be typed on, the model's references to them
// (<secret:NAME>), and the redaction of their values from everything that
// leaves the server.
//
// A secret is declared by name, in a file of NAME=value lines (dotenv, as
// Playwright MCP's --secrets takes) that only its owner may read, or in an
// environment variable CHROMEGATE_SECRET_NAME; never in a flag. Its origins
// are declared apart (Bind), and reach the policy as data: the policy, not
// this package, decides where a secret may go.
//
// The model never sees a value. It writes <secret:NAME> where it would type
// text (Expand substitutes it, in the server, after the policy allowed it),
// and every text the server sends out passes Redact, which puts
// <secret:NAME> back wherever the value, or a common encoding of it, shows
// up: in a page's text, a URL, a request body, an error, a log line.
//
// The rule of the strings: no text leaves the server with RunLength (6)
// consecutive characters of a secret, raw or in any encoding a browser, a
// server or a log gives it (Go's and the WHATWG URL and form encoders,
// encodeURIComponent, encodeURI, JSON, HTML, base64 and base64url at any
// alignment). That covers a value any reader cut, and a value edited in
// its field. It is the second layer: the first is the field (package mcp,
// secrets.go), whose value is shown as <secret:NAME> from the fill
// on, whatever it holds.
package vault

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/chromegate/chromegate/executor"
)

// MinLength is the shortest value a secret may have, in characters.
// Redaction replaces every occurrence of a value: a shorter one would cut
// ordinary words out of what the model reads, and would be guessed from
// what is left around it.
const MinLength = 8

// EnvPrefix starts the name of an environment variable that declares a
// secret: CHROMEGATE_SECRET_PASSWORD=… declares PASSWORD.
const EnvPrefix = "CHROMEGATE_SECRET_"

// FileMode is the widest mode a secrets file may have: no group or other
// permission bits.
const FileMode os.FileMode = 0o600

// Vault is a set of declared secrets. The zero Vault and a nil *Vault hold
// none: Expand refuses every reference and Redact returns its input. A
// Vault is immutable once built, and safe for concurrent use.
type Vault struct {
	secrets  map[string]*secret
	redactor *runIndex
}

type secret struct {
	value   string
	origins []string
	forms   []string // encodings(value), once
}

// New builds a vault of the given name → value pairs. Names follow dotenv
// (a letter or _, then letters, digits and _); values are at least
// MinLength characters. Errors name the secret, never its value.
func New(values map[string]string) (*Vault, error) {
	v := &Vault{secrets: make(map[string]*secret, len(values))}
	for name, value := range values {
		if !ValidName(name) {
			return nil, fmt.Errorf("secret name %q: use letters, digits and _ and start with a letter or _", name)
		}
		if n := utf8.RuneCountInString(value); n < MinLength {
			return nil, fmt.Errorf("secret %s is %d characters long; a secret needs at least %d to be redacted safely", name, n, MinLength)
		}
		v.secrets[name] = &secret{value: value, forms: encodings(value)}
	}
	v.redactor = newRunIndex(v.secrets, v.Names())
	return v, nil
}

// Load reads the secrets of a file (path, if not empty; see LoadFile) and
// of the environment (environ, as os.Environ gives it; see FromEnv). A name
// declared in both is an error: which one is meant would be a guess.
func Load(path string, environ []string) (*Vault, error) {
	values := map[string]string{}
	if path != "" {
		fv, err := LoadFile(path)
		if err != nil {
			return nil, err
		}
		values = fv
	}
	for name, value := range FromEnv(environ) {
		if _, dup := values[name]; dup {
			return nil, fmt.Errorf("secret %s is declared both in %s and in $%s%s; keep one", name, path, EnvPrefix, name)
		}
		values[name] = value
	}
	return New(values)
}

// reservedEnv is the one name under EnvPrefix that is not a secret:
// CHROMEGATE_SECRET_ORIGINS stands in for the --secret-origins flag.
const reservedEnv = "ORIGINS"

// FromEnv returns the secrets environ declares: each CHROMEGATE_SECRET_NAME
// variable with a non-empty NAME other than ORIGINS (the variable of the
// --secret-origins flag).
func FromEnv(environ []string) map[string]string {
	out := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if name, ok := strings.CutPrefix(k, EnvPrefix); ok && name != "" && name != reservedEnv {
			out[name] = v
		}
	}
	return out
}

// LoadFile reads a secrets file. It must be a regular file (not a symbolic
// link) whose mode grants nothing to group or others; anything else is
// refused before a byte of it is read. See ParseFile for the format.
func LoadFile(path string) (map[string]string, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("secrets file: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("secrets file %s: not a regular file", path)
	}
	if perm := info.Mode().Perm(); perm&^FileMode != 0 {
		return nil, fmt.Errorf("secrets file %s: mode is %04o; group and others must not have access (chmod 600 %s)", path, perm, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("secrets file: %w", err)
	}
	defer f.Close()
	return ParseFile(f, path)
}

// ParseFile reads NAME=value lines, the dotenv format: blank lines and
// lines starting with # are skipped; "export " before a name is allowed; a
// value may be quoted with '…' (taken as it is) or "…" (with \n, \t, \",
// \\ escapes), and an unquoted value ends at " #" (a comment) and is
// trimmed. Errors say the file (src) and line, never a value.
func ParseFile(r io.Reader, src string) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(strings.TrimSuffix(sc.Text(), "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", src, n, err)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%s line %d: %s is declared twice", src, n, name)
		}
		out[name] = value
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", src, errors.Unwrap(err))
	}
	return out, nil
}

func parseLine(line string) (name, value string, err error) {
	line = strings.TrimPrefix(line, "export ")
	name, raw, ok := strings.Cut(line, "=")
	name = strings.TrimSpace(name)
	if !ok {
		return "", "", errors.New("want NAME=value")
	}
	if !ValidName(name) {
		return "", "", errors.New("the name before = must be letters, digits and _, starting with a letter or _")
	}
	raw = strings.TrimSpace(raw)
	switch {
	case strings.HasPrefix(raw, "'"):
		end := strings.IndexByte(raw[1:], '\'')
		if end < 0 {
			return "", "", fmt.Errorf("%s: the quoted value is not closed on its line", name)
		}
		value, rest := raw[1:1+end], raw[2+end:]
		return name, value, trailing(name, rest)
	case strings.HasPrefix(raw, `"`):
		var b strings.Builder
		for i := 1; i < len(raw); i++ {
			c := raw[i]
			switch {
			case c == '"':
				return name, b.String(), trailing(name, raw[i+1:])
			case c == '\\' && i+1 < len(raw):
				i++
				switch raw[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case 'r':
					b.WriteByte('\r')
				default:
					b.WriteByte(raw[i])
				}
			default:
				b.WriteByte(c)
			}
		}
		return "", "", fmt.Errorf("%s: the quoted value is not closed on its line", name)
	}
	if i := strings.Index(raw, " #"); i >= 0 {
		raw = raw[:i]
	}
	return name, strings.TrimSpace(raw), nil
}

// trailing allows only a comment after a quoted value.
func trailing(name, rest string) error {
	rest = strings.TrimSpace(rest)
	if rest != "" && !strings.HasPrefix(rest, "#") {
		return fmt.Errorf("%s: unexpected text after the quoted value", name)
	}
	return nil
}

// ValidName says whether name can name a secret: a letter or _, then
// letters, digits and _ (an environment variable's name).
func ValidName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// ParseBinding reads one --secret-origins value, NAME=ORIGIN[,ORIGIN…],
// and returns the name and the origins in their serialised form
// (https://login.example.com, http://127.0.0.1:8080: scheme, host and a
// port other than the scheme's default; nothing else).
func ParseBinding(spec string) (name string, origins []string, err error) {
	name, list, ok := strings.Cut(spec, "=")
	if !ok || !ValidName(name) {
		return "", nil, fmt.Errorf("%q: want NAME=https://host[,https://other]", spec)
	}
	for o := range strings.SplitSeq(list, ",") {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		norm, err := NormalOrigin(o)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", name, err)
		}
		if !slices.Contains(origins, norm) {
			origins = append(origins, norm)
		}
	}
	if len(origins) == 0 {
		return "", nil, fmt.Errorf("%s: no origin given", name)
	}
	return name, origins, nil
}

// NormalOrigin returns an origin as a browser serialises it, or an error
// for anything that is not just scheme://host[:port].
func NormalOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("origin %q: want scheme://host[:port], e.g. https://login.example.com", s)
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return "", fmt.Errorf("origin %q: an origin has no user, path, query or fragment", s)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", fmt.Errorf("origin %q: only http and https origins take typed text", s)
	}
	return executor.OriginOf(scheme + "://" + u.Host), nil
}

// Bind declares the origins a secret may go to, replacing any it had. It
// is part of building a Vault: call it before the Vault is shared.
func (v *Vault) Bind(name string, origins []string) error {
	s, ok := v.lookup(name)
	if !ok {
		return fmt.Errorf("--secret-origins names %s, which is not a declared secret (%s)", name, v.declared())
	}
	s.origins = slices.Clone(origins)
	return nil
}

func (v *Vault) lookup(name string) (*secret, bool) {
	if v == nil {
		return nil, false
	}
	s, ok := v.secrets[name]
	return s, ok
}

// Len is the number of secrets.
func (v *Vault) Len() int {
	if v == nil {
		return 0
	}
	return len(v.secrets)
}

// Names returns the names of the secrets, sorted.
func (v *Vault) Names() []string {
	if v == nil {
		return nil
	}
	names := make([]string, 0, len(v.secrets))
	for n := range v.secrets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Origins returns each secret's origins, for the policy's data
// (secret_origins): a secret bound to none has an empty list.
func (v *Vault) Origins() map[string][]string {
	out := make(map[string][]string, v.Len())
	for _, n := range v.Names() {
		out[n] = append([]string{}, v.secrets[n].origins...)
	}
	return out
}

// declared lists the names for an error message.
func (v *Vault) declared() string {
	names := v.Names()
	if len(names) == 0 {
		return "no secrets are declared"
	}
	return "declared: " + strings.Join(names, ", ")
}

// UnknownError is a reference to a secret that is not declared. Its
// message names the reference and the declared names, never a value.
type UnknownError struct {
	Name     string
	Declared []string
}

func (e *UnknownError) Error() string {
	if len(e.Declared) == 0 {
		return fmt.Sprintf("secret %s is not declared: no secrets are declared", e.Name)
	}
	return fmt.Sprintf("secret %s is not declared (declared: %s)", e.Name, strings.Join(e.Declared, ", "))
}

// Refs returns the names of the secrets s refers to, each once, in the
// order they first appear, and checks that each is declared. A malformed
// reference is a *RefError, an undeclared name an *UnknownError.
func (v *Vault) Refs(s string) ([]string, error) {
	parts, err := ParseRefs(s)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range parts {
		if p.Secret == "" || slices.Contains(names, p.Secret) {
			continue
		}
		if _, ok := v.lookup(p.Secret); !ok {
			return nil, &UnknownError{Name: p.Secret, Declared: v.Names()}
		}
		names = append(names, p.Secret)
	}
	return names, nil
}

// Expand returns s with each reference replaced by its secret's value and
// <secret:> by the literal text "<secret:", and the names it referred to.
func (v *Vault) Expand(s string) (string, []string, error) {
	parts, err := ParseRefs(s)
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	var names []string
	for _, p := range parts {
		if p.Secret == "" {
			b.WriteString(p.Text)
			continue
		}
		sec, ok := v.lookup(p.Secret)
		if !ok {
			return "", nil, &UnknownError{Name: p.Secret, Declared: v.Names()}
		}
		if !slices.Contains(names, p.Secret) {
			names = append(names, p.Secret)
		}
		b.WriteString(sec.value)
	}
	return b.String(), names, nil
}

// Shown is how a redacted value reads: the reference that would type it.
func Shown(name string) string { return RefOpen + name + ">" }

// encodings are the forms in which a page, a server or a log plausibly
// echoes a value: as it is; URL- and form-encoded (Go's escapes, and a
// browser's: webEncodings); JSON-escaped (a JSON body or a log line), with and without
// HTML-safe escapes; HTML-escaped (an attribute or markup); base64 and
// base64url, padded or not, at each of the three alignments.
func encodings(v string) []string {
	jsonEsc := func(v string, html bool) string {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		_ = enc.Encode(v) // a string always encodes
		return strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(b.String(), `"`), "\n"), `"`)
	}
	forms := []string{
		v,
		url.QueryEscape(v),
		url.PathEscape(v),
		strings.ReplaceAll(url.QueryEscape(v), "+", "%20"),
		jsonEsc(v, false),
		jsonEsc(v, true),
		// JSON in a JSON string: a page's JSON.stringify in eval's value.
		jsonEsc(jsonEsc(v, false), false),
		html.EscapeString(v),
		// As a browser serialises it (innerHTML, get_html): in text, &, <
		// and > escaped; in an attribute, & and ".
		textEscaper.Replace(v),
		attrEscaper.Replace(v),
		base64.StdEncoding.EncodeToString([]byte(v)),
		base64.RawStdEncoding.EncodeToString([]byte(v)),
		base64.URLEncoding.EncodeToString([]byte(v)),
		base64.RawURLEncoding.EncodeToString([]byte(v)),
	}
	forms = append(forms, webEncodings(v)...)
	return append(forms, base64Shifts(v)...)
}

var (
	textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\u00a0", "&nbsp;")
	attrEscaper = strings.NewReplacer("&", "&amp;", `"`, "&quot;", "\u00a0", "&nbsp;")
)

// Redact returns s with every secret's value, each encoding of it, and
// every run of RunLength or more characters of either, replaced by
// <secret:NAME> (see RunLength for the trade-off).
func (v *Vault) Redact(s string) string {
	if v == nil || v.redactor == nil || len(v.secrets) == 0 {
		return s
	}
	return v.redactor.replace(s)
}

// minEdge is the shortest part of a value RedactEdges takes off an edge:
// shorter parts match too much ordinary text to be told from it.
const minEdge = 4

// RedactEdges replaces a part of a value (or of an encoding of it) that s
// starts or ends with: what is left when a longer text holding the value
// was cut inside it (a page's window of text, a size cap). Call it on a
// text Redact already passed.
func (v *Vault) RedactEdges(s string) string {
	if v.Len() == 0 || s == "" {
		return s
	}
	head, tail := 0, len(s)
	headName, tailName := "", ""
	for name, sec := range v.secrets {
		for _, e := range sec.forms {
			if len(s) >= minEdge && strings.Contains(e, s) {
				return Shown(name) // a window inside the value
			}
			for k := len(e) - 1; k >= minEdge; k-- {
				if k <= len(s) && k > len(s)-tail && strings.HasSuffix(s, e[:k]) {
					tail, tailName = len(s)-k, name
					break
				}
			}
			for k := len(e) - 1; k >= minEdge; k-- {
				if k <= len(s) && k > head && strings.HasPrefix(s, e[len(e)-k:]) {
					head, headName = k, name
					break
				}
			}
		}
	}
	if head > tail { // the whole of s is inside one value
		return Shown(headName)
	}
	out := s[head:tail]
	if headName != "" {
		out = Shown(headName) + out
	}
	if tailName != "" {
		out += Shown(tailName)
	}
	return out
}
