package flow

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
)

const (
	mail  = "https://mail.example"
	forum = "https://forum.example"
	evil  = "https://evil.example"
)

const letter = `Dear Ann,
Your one-time recovery code is   QX7-PLUM-4431-ORBIT and the account
number is 5500 0000 0000 0004. Regards, the Bank`

func TestMatchThroughTransformations(t *testing.T) {
	t.Parallel()
	secret := "QX7-PLUM-4431-ORBIT"
	for _, tc := range []struct {
		name, value string
	}{
		{"verbatim", secret},
		{"case", strings.ToLower(secret)},
		{"inside", "https://evil.example/?q=" + secret + "&x=1"},
		{"whitespace", "recovery  code\n is QX7-PLUM"},
		{"url encoded", url.QueryEscape("recovery code is " + secret)},
		{"percent everywhere", "%51%58%37%2D%50%4C%55%4D%2D%34%34%33%31"},
		{"form", "q=recovery+code+is+QX7"},
		{"double encoded", url.QueryEscape(url.QueryEscape("code is " + secret))},
		{"base64 std", base64.StdEncoding.EncodeToString([]byte("the code " + secret))},
		{"base64 url", base64.RawURLEncoding.EncodeToString([]byte("code: " + secret + "??>>"))},
		{"base64 in a query", "https://evil.example/c?d=" + url.QueryEscape(base64.StdEncoding.EncodeToString([]byte(secret)))},
		{"substring", "PLUM-4431-ORB"},
		{"card", "5500 0000 0000 0004"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := New()
			tr.Read(mail, letter)
			got := tr.Match(evil, []Value{{Via: "arg:url", Text: tc.value}})
			if len(got) != 1 || got[0].FromOrigin != mail || got[0].ToOrigin != evil || got[0].Via != "arg:url" {
				t.Fatalf("Match(%q) = %+v, want one flow from %s", tc.value, got, mail)
			}
			if got[0].Length < MinLen {
				t.Errorf("Length = %d, want at least %d", got[0].Length, MinLen)
			}
		})
	}
}

func TestNoFalseFlow(t *testing.T) {
	t.Parallel()
	tr := New()
	tr.Read(mail, letter+"\nSign in with your username and password. Information for customers.")
	for _, v := range []string{
		"password",             // a common word: one window, no total yet
		"the",                  // shorter than a window
		"https://evil.example", // its own URL
		"hello world, nice to meet you",
		"QX7-PLU", // 7 characters of the secret
	} {
		if got := tr.Match(evil, []Value{{Via: "arg:text", Text: v}}); len(got) != 0 {
			t.Errorf("Match(%q) = %+v, want none", v, got)
		}
	}
	if got := tr.Match(mail, []Value{{Via: "arg:text", Text: "QX7-PLUM-4431-ORBIT"}}); len(got) != 0 {
		t.Errorf("same origin: %+v, want none", got)
	}
}

func TestDestinationWordsDoNotCount(t *testing.T) {
	t.Parallel()
	tr := New()
	tr.Read(mail, "Welcome to the quarterly planning document")
	tr.Read(forum, "Post your quarterly planning document here")
	if got := tr.Match(forum, []Value{{Via: "arg:text", Text: "quarterly planning document"}}); len(got) != 0 {
		t.Errorf("words the destination showed too: %+v, want none", got)
	}
}

func TestSplitValueAddsUp(t *testing.T) {
	t.Parallel()
	tr := New()
	tr.Read(mail, "token: a9f3k2m8x7q4z1w6 end")
	first := tr.Match(evil, []Value{{Via: "url", Text: "/p?a=a9f3k2m8"}})
	if len(first) != 0 {
		t.Fatalf("first piece (8 characters) made a flow: %+v", first)
	}
	second := tr.Match(evil, []Value{{Via: "url", Text: "/p?b=x7q4z1w6"}})
	if len(second) != 1 || second[0].Total != 16 || second[0].Length != 8 {
		t.Fatalf("second piece = %+v, want one flow of length 8, total 16", second)
	}
	again := tr.Match(evil, []Value{{Via: "url", Text: "/p?b=x7q4z1w6"}})
	if len(again) != 1 || again[0].Total != 16 {
		t.Fatalf("a piece sent again counts once: %+v", again)
	}
	if other := tr.Match(forum, []Value{{Via: "url", Text: "/p?a=a9f3k2m8"}}); len(other) != 0 {
		t.Errorf("another destination has its own total: %+v", other)
	}
}

func TestFirstSeenHost(t *testing.T) {
	t.Parallel()
	tr := New()
	tr.Read(forum, "Great thread! See https://Evil.Example:8443/x and mirror.evil.example for more.")
	tr.Read(mail, "links: evil.example docs.example")
	for host, want := range map[string]string{
		"evil.example:8443": forum, "evil.example": forum, "mirror.evil.example": forum,
		"docs.example": mail, "forum.example": forum, "evil.example:9000": forum,
	} {
		if got, ok := tr.FirstSeenHost(host); !ok || got != want {
			t.Errorf("FirstSeenHost(%q) = %q, %v; want %q", host, got, ok, want)
		}
	}
	if _, ok := tr.FirstSeenHost("never.example"); ok {
		t.Error("a host never shown was seen")
	}
	got := tr.Match(evil, []Value{{Via: "url.host", Text: "mirror.evil.example"}})
	want := Flow{FromOrigin: forum, ToOrigin: evil, Via: "url.host", Length: len("mirror.evil.example")}
	if len(got) != 1 || got[0] != want {
		t.Errorf("url.host flow = %+v, want %+v", got, want)
	}
	if got := tr.Match(forum, []Value{{Via: "url.host", Text: "forum.example"}}); len(got) != 0 {
		t.Errorf("an origin's own host is no flow to it: %+v", got)
	}
}

func TestBounds(t *testing.T) {
	t.Parallel()
	tr := New()
	tr.Read(mail, "the secret is zebra-kettle-9931-quartz")
	for i := range MaxOrigins + 5 {
		tr.Read(fmt.Sprintf("https://o%d.example", i), randomText(i, 2000))
	}
	if n := len(tr.Origins()); n != MaxOrigins {
		t.Errorf("origins kept = %d, want %d", n, MaxOrigins)
	}
	if got := tr.Match(evil, []Value{{Via: "arg:text", Text: "zebra-kettle-9931-quartz"}}); len(got) != 0 {
		t.Errorf("the origin read least recently was kept: %+v", got)
	}
	big := New()
	big.Read(mail, "first page: zebra-kettle-9931-quartz")
	for i := range 8 {
		big.Read(mail, randomText(100+i, MaxOriginGrams))
	}
	if big.grams > 2*MaxOriginGrams {
		t.Errorf("one origin kept %d windows, bound %d", big.grams, 2*MaxOriginGrams)
	}
	if got := big.Match(evil, []Value{{Via: "arg:text", Text: "zebra-kettle-9931-quartz"}}); len(got) != 0 {
		t.Errorf("the oldest windows were kept: %+v", got)
	}
	for i := range 64 {
		big.Read(fmt.Sprintf("https://p%d.example", i), randomText(1000+i, MaxOriginGrams))
	}
	if big.grams > MaxSessionGrams {
		t.Errorf("session kept %d windows, bound %d", big.grams, MaxSessionGrams)
	}
	big.Forget()
	if len(big.Origins()) != 0 || big.grams != 0 {
		t.Error("Forget kept something")
	}
}

func TestConcurrent(t *testing.T) {
	t.Parallel()
	tr := New()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			o := fmt.Sprintf("https://o%d.example", i)
			for j := range 50 {
				tr.Read(o, randomText(i*100+j, 200))
				tr.Match(evil, []Value{{Via: "url", Text: randomText(j, 40)}})
				tr.FirstSeenHost("o1.example")
			}
		})
	}
	wg.Wait()
}

// randomText is deterministic text of n characters that shares no run of
// K with other seeds' (beyond chance).
func randomText(seed, n int) string {
	const alpha = "abcdefghijklmnopqrstuvwxyz0123456789 "
	x := uint64(seed)*0x9e3779b97f4a7c15 + 1
	b := make([]byte, n)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = alpha[x%uint64(len(alpha))]
	}
	return string(b)
}

func FuzzMatch(f *testing.F) {
	f.Add(letter, "QX7-PLUM-4431-ORBIT")
	f.Add("a b c", "%zz%4")
	f.Add("évènement ÉTÉ 日本語テキスト", base64.StdEncoding.EncodeToString([]byte("日本語テキスト")))
	f.Fuzz(func(t *testing.T, read, value string) {
		tr := New()
		tr.Read(mail, read)
		for _, fl := range tr.Match(evil, []Value{{Via: "arg:x", Text: value}, {Via: "url.host", Text: value}}) {
			if fl.FromOrigin != mail || fl.ToOrigin != evil || fl.Length <= 0 {
				t.Fatalf("flow %+v", fl)
			}
		}
		// What was read verbatim, long enough, always flows.
		if n := len(normalise(read)); n >= MinLen {
			if got := tr.Match(evil, []Value{{Via: "arg:x", Text: read}}); len(got) == 0 {
				t.Fatalf("reading %q back made no flow", read)
			}
		}
		if got := tr.Match(mail, []Value{{Via: "arg:x", Text: read}}); len(got) != 0 {
			t.Fatalf("same origin flowed: %+v", got)
		}
	})
}

// BenchmarkMatch is the cost of deciding one call's values (a URL and a
// typed text) after 100 pages were read; it reports the session's memory.
func BenchmarkMatch(b *testing.B) {
	tr := sessionOf100Pages()
	values := []Value{{Via: "url", Text: "/search?q=" + url.QueryEscape(randomText(7, 60))}, {Via: "arg:text", Text: randomText(8, 200)}}
	b.ResetTimer()
	for b.Loop() {
		tr.Match(evil, values)
	}
}

// BenchmarkRead is the cost of remembering one page of 5000 characters.
func BenchmarkRead(b *testing.B) {
	tr := New()
	page := randomText(1, 5000)
	for b.Loop() {
		tr.Read(mail, page)
	}
}

// TestMemoryPerSession prints the heap one session holds after reading
// 100 pages of 5000 characters from 10 origins: of random characters (every
// window new: the worst case) and of words (as pages are).
func TestMemoryPerSession(t *testing.T) {
	for name, page := range map[string]func(int) string{
		"random characters": func(i int) string { return randomText(i, 5000) },
		"words":             func(i int) string { return wordText(i, 5000) },
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		tr := New()
		for i := range 100 {
			tr.Read(fmt.Sprintf("https://site%d.example", i%10), page(i))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		t.Logf("memory per session after 100 pages of %s (500000 characters, 10 origins): %d KiB, %d windows kept", name, held/1024, tr.grams)
		runtime.KeepAlive(tr)
		if tr.grams > MaxSessionGrams {
			t.Errorf("kept %d windows, bound %d", tr.grams, MaxSessionGrams)
		}
	}
}

// wordText is n characters of common words and numbers.
func wordText(seed, n int) string {
	words := strings.Fields("the report of meeting invoice customer account shipping delivery order status quarterly and to for with your")
	var b strings.Builder
	x := uint64(seed)*0x9e3779b97f4a7c15 + 3
	for b.Len() < n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		fmt.Fprintf(&b, "%s %d ", words[x%uint64(len(words))], x%1000)
	}
	return b.String()
}

func sessionOf100Pages() *Tracker {
	tr := New()
	for i := range 100 {
		tr.Read(fmt.Sprintf("https://site%d.example", i%10), randomText(i, 5000))
	}
	return tr
}
