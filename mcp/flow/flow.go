// Package flow remembers, for one session, what content of which origin the
// model was shown, and tells which of those origins a value about to leave
// the browser carries: information-flow provenance for the policy
// (input.flow, input.read_origins).
//
// The rule: a value carries an origin's content when a run of at least
// MinLen characters of it, after normalisation, was shown from that
// origin and not from the origin the value goes to; or when runs of at
// least K characters of it add up, over the session, to MinLen new
// characters from that origin to that destination (a value split over
// several calls). Reads never make a flow to their own origin.
//
// Nothing of the text is kept: Read keeps 64-bit hashes of the
// normalised text's K-character windows (its K-grams) per origin, and the
// host names the text mentions. Normalisation folds case and collapses
// every run of white space to one space. A value is matched as it is, URL-
// and form-decoded (%xx, + for space, up to three times), and, for each
// run of base64 characters (standard or URL alphabet) long enough to hold
// MinLen characters, base64-decoded: the transformations a model makes on
// the way.
//
// Why K is 8 and MinLen 12. A window is the unit of memory: shorter
// than 8, most windows of any text are windows of every text (" the ",
// "tion ", digits), and a 64-bit hash per 5 characters would cost more than
// it tells. A single run is reported from 12 characters: long enough that
// the short words and word pairs pages share ("sign in", "password",
// "https://", "?utm_source=") fall short or sit in the destination's own
// words, short enough that what matters shows — a token or an API key (16
// and more), an e-mail address, a card or account number, a full name. A
// value split into pieces of at least 8 characters still adds up, in
// Total, each window counted once per (from, to), so sending the same
// common word twice adds nothing. Windows also shown from the destination
// origin do not count (the words of the page a value is typed into are not
// a flow to it). A URL is passed as two values (see the callers): its
// path, query and fragment, matched by windows, and its host as
// "url.host", matched against the host names the session was shown
// (FirstSeenHost).
//
// Bounds: per origin at most 2×MaxOriginGrams windows, in two generations
// (when the newer fills, the older is dropped: the oldest content goes
// first); per session at most MaxOrigins origins and MaxSessionGrams
// windows (the origin read least recently goes first), and MaxHosts host
// names (first seen kept, later ones ignored). A Tracker is safe for
// concurrent use.
package flow

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Sizes of the matcher; see the package comment.
const (
	K               = 8
	MinLen          = 12
	MaxOriginGrams  = 1 << 15
	MaxSessionGrams = 1 << 18
	MaxOrigins      = 64
	MaxHosts        = 4096
	// MaxValue bounds the characters of one value matched (an eval source
	// can be long): the rest is not looked at.
	MaxValue = 1 << 16
)

// Value is one value a call or a request sends: Via says where it sits
// ("arg:text", "url", "url.host", "request.url"), Text what it is.
type Value struct {
	Via  string
	Text string
}

// Flow says that a value sent to ToOrigin carries content shown from
// FromOrigin: Length is its longest matched run in characters (for
// "url.host", the host's length), Total the characters matched from
// FromOrigin to ToOrigin over the session, each counted once.
type Flow struct {
	FromOrigin string
	ToOrigin   string
	Via        string
	Length     int
	Total      int
}

// Tracker is one session's memory of what the model was shown.
type Tracker struct {
	mu      sync.Mutex
	origins map[string]*origin
	grams   int    // windows kept over all origins
	clock   uint64 // ticks on every Read, for least recently read
	hosts   map[string]string
	sent    map[pair]*sent
	// seen has a bit set for every window any origin was shown (never
	// cleared): most windows of a value were shown by nobody, and one
	// look at it spares a look at each origin's sets.
	seen []uint64
}

// seenBits is the size of Tracker.seen: 128 KiB, allocated on the first
// Read.
const seenBits = 1 << 20

func (t *Tracker) mark(h uint64) {
	if t.seen == nil {
		t.seen = make([]uint64, seenBits/64)
	}
	i := h >> 44 // the high bits: the sets index by the low ones
	t.seen[i/64] |= 1 << (i % 64)
}

func (t *Tracker) maybe(h uint64) bool {
	if t.seen == nil {
		return false
	}
	i := h >> 44
	return t.seen[i/64]&(1<<(i%64)) != 0
}

type origin struct {
	cur, old *set
	read     uint64 // clock of the last Read
}

func (o *origin) has(h uint64) bool { return o.cur.has(h) || o.old.has(h) }

func (o *origin) len() int { return o.cur.len() + o.old.len() }

type pair struct{ from, to string }

// sent is what flowed from one origin to another: the windows already
// counted in Total.
type sent struct {
	grams set
	total int
}

// New returns an empty tracker.
func New() *Tracker {
	return &Tracker{origins: map[string]*origin{}, hosts: map[string]string{}, sent: map[pair]*sent{}}
}

// Read remembers that the model was shown text from origin ("" or "null"
// are not origins and are ignored).
func (t *Tracker) Read(from, text string) {
	if from == "" || from == "null" {
		return
	}
	grams := windows(normalise(text))
	hosts := hostsIn(text)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clock++
	o := t.origins[from]
	if o == nil {
		o = &origin{cur: &set{}, old: &set{}}
		t.origins[from] = o
		t.seeHost(hostOf(from), from)
	}
	o.read = t.clock
	for _, h := range grams {
		if o.has(h) {
			continue
		}
		if o.cur.len() >= MaxOriginGrams {
			t.grams -= o.old.len()
			o.old, o.cur = o.cur, &set{}
		}
		o.cur.add(h)
		t.mark(h)
		t.grams++
	}
	for _, h := range hosts {
		t.seeHost(h, from)
	}
	t.evict(from)
}

// evict drops the least recently read origins (never keep) past the
// session's bounds.
func (t *Tracker) evict(keep string) {
	for len(t.origins) > MaxOrigins || t.grams > MaxSessionGrams {
		var lru string
		var at uint64
		for name, o := range t.origins {
			if name != keep && (lru == "" || o.read < at) {
				lru, at = name, o.read
			}
		}
		if lru == "" {
			return
		}
		o := t.origins[lru]
		t.grams -= o.len()
		delete(t.origins, lru)
	}
}

func (t *Tracker) seeHost(host, from string) {
	if host == "" || len(t.hosts) >= MaxHosts {
		return
	}
	if _, ok := t.hosts[host]; !ok {
		t.hosts[host] = from
	}
}

// FirstSeenHost returns the origin whose content first named host (a host
// name, with ":port" when the content gave one), or whose own host it is.
// A host with a port not seen is looked up without it.
func (t *Tracker) FirstSeenHost(host string) (string, bool) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	t.mu.Lock()
	defer t.mu.Unlock()
	if o, ok := t.hosts[host]; ok {
		return o, true
	}
	if h, _, ok := cutPort(host); ok {
		o, ok := t.hosts[h]
		return o, ok
	}
	return "", false
}

// Origins returns the origins the model was shown content from, sorted.
func (t *Tracker) Origins() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.origins))
	for o := range t.origins {
		out = append(out, o)
	}
	slices.Sort(out)
	return out
}

// Forget drops everything the tracker holds (the session ended).
func (t *Tracker) Forget() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.origins, t.hosts, t.sent, t.grams, t.seen = map[string]*origin{}, map[string]string{}, map[pair]*sent{}, 0, nil
}

// Match returns the flows the values sent to origin to carry: for each
// value and each origin other than to whose content it carries (see the
// package comment), one Flow, ordered by value then origin. A "url.host"
// value flows from the origin that first named the host, when that is
// not to. Total counts what was matched whether or not the policy then
// let it go.
func (t *Tracker) Match(to string, values []Value) []Flow {
	var out []Flow
	for _, v := range values {
		if v.Via == "url.host" || v.Via == "request.host" {
			if from, ok := t.FirstSeenHost(v.Text); ok && from != to {
				out = append(out, Flow{FromOrigin: from, ToOrigin: to, Via: v.Via, Length: utf8.RuneCountInString(v.Text)})
			}
			continue
		}
		out = append(out, t.matchValue(to, v)...)
	}
	return out
}

func (t *Tracker) matchValue(to string, v Value) []Flow {
	var variants [][]uint64
	for _, s := range decodings(v.Text) {
		if g := windows(normalise(s)); len(g) > 0 {
			variants = append(variants, g)
		}
	}
	if len(variants) == 0 {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	dest := t.origins[to]
	for i, g := range variants {
		variants[i] = t.shown(g)
	}
	var out []Flow
	for name, o := range t.origins {
		if name == to {
			continue
		}
		longest := 0
		var runs [][]uint64
		for _, g := range variants {
			n, r := runsIn(g, o, dest)
			longest = max(longest, n)
			runs = append(runs, r...)
		}
		if longest == 0 {
			continue
		}
		total := t.count(pair{name, to}, runs)
		if longest < MinLen && total < MinLen {
			continue
		}
		out = append(out, Flow{FromOrigin: name, ToOrigin: to, Via: v.Via, Length: longest, Total: total})
	}
	slices.SortFunc(out, func(a, b Flow) int { return cmp.Compare(a.FromOrigin, b.FromOrigin) })
	return out
}

// shown is g with every window no origin was shown replaced by 0, which
// set.has never finds.
func (t *Tracker) shown(g []uint64) []uint64 {
	for i, h := range g {
		if !t.maybe(h) {
			g[i] = 0
		}
	}
	return g
}

// runsIn finds the runs of g's windows that o holds and dest does not:
// the longest in characters, and each run's windows.
func runsIn(g []uint64, o, dest *origin) (int, [][]uint64) {
	longest, start := 0, -1
	var runs [][]uint64
	for i := 0; i <= len(g); i++ {
		in := i < len(g) && g[i] != 0 && o.has(g[i]) && (dest == nil || !dest.has(g[i]))
		switch {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			runs = append(runs, g[start:i])
			longest = max(longest, i-start+K-1)
			start = -1
		}
	}
	return longest, runs
}

// count adds runs to what flowed over p and returns the total: each window
// counted once, a run's first window as the K characters it holds and
// each next one as the one character it adds, so that a run of n new
// characters counts n.
func (t *Tracker) count(p pair, runs [][]uint64) int {
	s := t.sent[p]
	if s == nil {
		s = &sent{}
		t.sent[p] = s
	}
	for _, r := range runs {
		for i, h := range r {
			if s.grams.len() >= MaxOriginGrams || !s.grams.add(h) {
				continue
			}
			s.total++
			if i == 0 {
				s.total += K - 1
			}
		}
	}
	return s.total
}

// normalise folds case and collapses white space.
func normalise(s string) []rune {
	if len(s) > 4*MaxValue {
		s = s[:4*MaxValue]
	}
	out := make([]rune, 0, len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && len(out) > 0 {
			out = append(out, ' ')
		}
		space = false
		out = append(out, unicode.ToLower(r))
	}
	return out
}

// windows hashes each K-rune window of rs.
func windows(rs []rune) []uint64 {
	if len(rs) < K {
		return nil
	}
	out := make([]uint64, 0, len(rs)-K+1)
	for i := 0; i+K <= len(rs); i++ {
		h := uint64(14695981039346656037)
		for _, r := range rs[i : i+K] {
			h ^= uint64(r)
			h *= 1099511628211
		}
		out = append(out, mix(h))
	}
	return out
}

// mix is splitmix64's finaliser: FNV's low bits are weak.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}
