package mcp

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"image"
	"image/jpeg"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/helpers/picture"
	"github.com/chromegate/chromegate/mcp/record"
	"github.com/chromegate/chromegate/policy"
)

// Recording (serve --record DIR). Every call passes recordStage with its
// decision, so the record is kept there and nowhere else: a call of any
// transport, a plugin and each of its steps. What is written is redacted
// before it leaves this file: arguments as the decision log's (typed text,
// fill values, cookies: "[redacted]"; a <secret:NAME> reference kept as
// written); every text a page could have echoed them into (summary, URL,
// title, reasons) with secret values and the session's typed text
// replaced. Recording never fails a call: a write error is logged once and
// that record stops.

// Recorder keeps one record per principal and session under Root:
// Root/PRINCIPAL/SESSION (record.SessionDir). A stdio server's is
// Root/local/default; over HTTP, a key's calls go under its name, in the
// MCP session's id or the named session it chose.
type Recorder struct {
	Root string
	// MaxBytes caps each session's record (0: record.DefaultMaxBytes).
	MaxBytes int64
	// ShotWidth is the width screenshots are scaled down to (0: 480).
	ShotWidth int

	mu       sync.Mutex
	sessions map[string]*sessionRecord
}

type sessionRecord struct {
	w     *record.Writer
	mu    sync.Mutex
	typed []string // plain text typed in this session: never written anywhere
	// console is, per tab, the time of the latest console error the
	// record holds, so each error is recorded once, with the call that
	// ended after it.
	console map[string]int64
}

// Close closes every session's record. It may be called more than once.
func (r *Recorder) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.sessions {
		if s.w != nil {
			s.w.Close()
		}
	}
	return nil
}

func (r *Recorder) session(log *slog.Logger, p Principal, session string) *sessionRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sessions == nil {
		r.sessions = map[string]*sessionRecord{}
	}
	key := p.Name + "\x00" + session
	if s, ok := r.sessions[key]; ok {
		return s
	}
	s := &sessionRecord{}
	r.sessions[key] = s
	dir := record.SessionDir(r.Root, p.Name, session)
	var once sync.Once
	w, err := record.Open(dir, r.MaxBytes, func(err error) {
		once.Do(func() {
			log.Error("the session record could not be written; recording stops for this session", "dir", dir, "err", err)
		})
	})
	if err != nil {
		log.Error("the session record could not be opened; this session is not recorded", "dir", dir, "err", err)
		return s
	}
	log.Info("recording session", "dir", dir)
	s.w = w
	return s
}

// callRecord is what recordStage gathers about one call for the record.
type callRecord struct {
	s      *sessionRecord
	start  time.Time
	mark   uint64
	target *record.Element
	fields []*record.Element
}

//go:embed record/describe.js
var describeJS string

var describeSource = executor.WithRefs(describeJS)

// startRecord begins c's record, or returns nil when nothing is recorded.
func (s *Server) startRecord(c *Call) *callRecord {
	if s.opts.Record == nil {
		return nil
	}
	sr := s.opts.Record.session(s.log, c.Principal, c.Session)
	if sr.w == nil {
		return nil
	}
	return &callRecord{s: sr, start: time.Now(), mark: s.opts.Egress.Mark(c.Session)}
}

// recordRefused records a call refused before gatedPath: a tool hidden from
// the caller, a rate limit, arguments that do not validate (their values
// are not recorded: they were never checked against the tool's schema).
func (s *Server) recordRefused(t *Tool, session string, p Principal, err error) {
	c := &Call{Tool: t, Session: session, Principal: p}
	if c.rec = s.startRecord(c); c.rec != nil {
		s.endRecord(context.Background(), c, nil, nil, err)
	}
}

// describeTargets reads, once the Gate allowed the call and before it
// acts, what the call's refs point at (the element may be gone after).
func (s *Server) describeTargets(ctx context.Context, c *Call, ex executor.Executor) {
	rec := c.rec
	if rec == nil || ex == nil || c.Tool.ReadOnly == nil || *c.Tool.ReadOnly {
		return
	}
	var refs []string
	if ref := argString(c.Args, "ref"); ref != "" {
		refs = append(refs, ref)
	} else if ref := pointRef(ctx, c); ref != "" {
		refs = append(refs, ref) // what a call at a point hit
	}
	fields, _ := c.Args["fields"].([]any)
	for _, f := range fields {
		m, _ := f.(map[string]any)
		refs = append(refs, argString(m, "ref"))
	}
	if len(refs) == 0 || (len(fields) == 0 && refs[0] == "") {
		return
	}
	arg, _ := json.Marshal(map[string]any{"refs": refs})
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	sp := executor.ScriptParams{TabID: c.TabID(), Source: describeSource, Arg: arg}
	if c.frame != nil && len(fields) == 0 && executor.RefToken(refs[0]) == c.frame.Doc {
		// the element is in a frame's document, which the Gate decided
		sp.Doc = c.frame.Doc
	}
	out, err := ex.RunScript(dctx, sp)
	if err != nil {
		return
	}
	var els []*record.Element
	if json.Unmarshal(out.Value, &els) != nil || len(els) != len(refs) {
		return
	}
	if len(fields) > 0 {
		rec.fields = els
		return
	}
	rec.target = els[0]
}

// endRecord writes c's entry.
func (s *Server) endRecord(ctx context.Context, c *Call, ex executor.Executor, r *Result, err error) {
	rec := c.rec
	t := c.Tool
	sr := rec.s
	sr.mu.Lock()
	defer sr.mu.Unlock()
	sr.typed = append(sr.typed, typedTexts(c)...)
	if len(sr.typed) > maxTyped {
		sr.typed = sr.typed[len(sr.typed)-maxTyped:]
	}
	scrub := func(v string) string {
		v = s.opts.Secrets.Redact(v)
		for _, typed := range sr.typed {
			v = strings.ReplaceAll(v, typed, "[typed]")
		}
		return v
	}
	e := record.Entry{
		Time:       rec.start.UTC(),
		DurationMs: time.Since(rec.start).Milliseconds(),
		Session:    c.Session,
		Principal:  c.Principal.Name,
		Tool:       t.Name,
		Action:     string(t.Action),
		Acting:     t.ReadOnly == nil || !*t.ReadOnly,
		Args:       s.recordArgs(c),
		Decision:   "allow",
		Target:     rec.target,
		Fields:     rec.fields,
	}
	if c.Plugin != nil {
		e.Plugin = c.Plugin.Plugin
	}
	if err != nil {
		xe := executor.AsError(err)
		e.Code, e.Message, e.Decision = string(xe.Code), scrub(xe.Message), "error"
		if xe.Code == executor.CodePolicyDenied {
			e.Decision = "deny"
			for _, why := range strings.Split(xe.Message, "; ") {
				e.Reasons = append(e.Reasons, scrub(why))
			}
			if xe.Page != "" {
				e.Reasons = append(e.Reasons, scrub(xe.Page))
			}
		}
	}
	if r != nil {
		if raw, jerr := json.Marshal(r.Value); jerr == nil && r.Value != nil {
			e.Summary = cut(scrub(string(raw)), maxSummary)
		}
		if r.Text != "" {
			e.Summary += " (+" + itoa(len(r.Text)) + " characters of page text)"
		}
		page := r.Page
		if r.Landed != nil {
			page = r.Landed
		}
		if page != nil {
			e.URL, e.Title = cut(scrub(page.URL), 2000), cut(scrub(page.Title), 300)
		}
	}
	for _, d := range s.opts.Egress.Since(c.Session, rec.mark) {
		e.Denied = append(e.Denied, record.Request{Method: d.Method, URL: cut(scrub(d.URL), 2000), Reason: cut(scrub(d.Reason), 500)})
	}
	var shot []byte
	if ex != nil {
		if tab, ok := s.recordedTab(ctx, c, ex); ok {
			e.Console = s.recordConsole(ctx, c, ex, sr, tab, scrub)
			if e.Acting && err == nil && t.Name != "screenshot" {
				shot = s.recordShot(ctx, c, ex, tab)
			}
		}
	}
	sr.w.Write(e, shot)
}

// maxConsoleErrors bounds the console errors one entry holds, and
// maxConsoleText each one's text.
const (
	maxConsoleErrors = 20
	maxConsoleText   = 300
)

// recordConsole returns the console errors and uncaught exceptions the
// tab's page logged since the record last looked (the last two
// navigations, so a page the call left is included), screened like
// console_messages (nothing of a page or script outside the policy) and
// scrubbed.
func (s *Server) recordConsole(ctx context.Context, c *Call, ex executor.Executor, sr *sessionRecord, tab executor.Tab, scrub func(string) string) []string {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	log, err := ex.Console(cctx, executor.ConsoleParams{TabID: tab.ID, Navigations: 2})
	if err != nil {
		return nil
	}
	ms, _ := c.screenConsole(cctx, log.Messages, log.URL)
	if sr.console == nil {
		sr.console = map[string]int64{}
	}
	since, latest := sr.console[tab.ID], sr.console[tab.ID]
	var out []string
	for _, m := range ms {
		if m.Level != "error" || m.TimeMs <= since {
			continue
		}
		latest = max(latest, m.TimeMs)
		if len(out) < maxConsoleErrors {
			out = append(out, cut(scrub(m.Text), maxConsoleText))
		}
	}
	sr.console[tab.ID] = latest
	return out
}

const maxSummary = 600

// maxTyped bounds the typed texts a session's record scrubs from what
// pages echo (the latest ones).
const maxTyped = 256

// recordedTab is the tab the call left, if the policy allows its page:
// the record keeps nothing of a page outside it, and nothing at all
// without a policy to decide the page on.
func (s *Server) recordedTab(ctx context.Context, c *Call, ex executor.Executor) (executor.Tab, bool) {
	if _, ok := s.opts.Gate.(TabFilter); !ok {
		return executor.Tab{}, false
	}
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	tab, err := c.pageFunc(ex)(tctx)
	if err != nil || s.outside(tctx, c, documentURL(tab)) {
		return executor.Tab{}, false
	}
	return tab, true
}

// recordShot takes a small JPEG of the tab (see recordedTab), its
// frames the caller may not read painted over (Call.guardedShot).
func (s *Server) recordShot(ctx context.Context, c *Call, ex executor.Executor, tab executor.Tab) []byte {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	img, err := s.shotCall(c, ex, tab.ID).guardedShot(sctx, ex, tab.ID, false, false, 60, func() (executor.Screenshot, error) {
		return ex.Screenshot(sctx, executor.ScreenshotParams{TabID: tab.ID, Format: executor.FormatJPEG, Quality: 60})
	})
	if err != nil {
		return nil
	}
	w := s.opts.Record.ShotWidth
	if w <= 0 {
		w = 480
	}
	return shrinkJPEG(sctx, img.Data, w)
}

// shrinkJPEG scales a JPEG down to width (nearest pixel: it is a
// thumbnail), sampling the decoded planes directly. It decodes within the
// server's budget (decoded): a capture over the pixel cap is not kept.
func shrinkJPEG(ctx context.Context, data []byte, width int) []byte {
	var out []byte
	_ = picture.Decoded(ctx, data, func(src image.Image) error {
		out = shrinkDecoded(data, src, width)
		return nil
	})
	return out
}

func shrinkDecoded(data []byte, src image.Image, width int) []byte {
	b := src.Bounds()
	if b.Dx() <= width {
		return data
	}
	h := max(1, b.Dy()*width/b.Dx())
	var dst image.Image
	if y, ok := src.(*image.YCbCr); ok {
		d := image.NewYCbCr(image.Rect(0, 0, width, h), y.SubsampleRatio)
		for py := 0; py < h; py++ {
			sy := b.Min.Y + py*b.Dy()/h
			for px := 0; px < width; px++ {
				sx := b.Min.X + px*b.Dx()/width
				d.Y[d.YOffset(px, py)] = y.Y[y.YOffset(sx, sy)]
				co := d.COffset(px, py)
				sc := y.COffset(sx, sy)
				d.Cb[co], d.Cr[co] = y.Cb[sc], y.Cr[sc]
			}
		}
		dst = d
	} else {
		d := image.NewRGBA(image.Rect(0, 0, width, h))
		for py := 0; py < h; py++ {
			for px := 0; px < width; px++ {
				d.Set(px, py, src.At(b.Min.X+px*b.Dx()/width, b.Min.Y+py*b.Dy()/h))
			}
		}
		dst = d
	}
	var out bytes.Buffer
	if jpeg.Encode(&out, dst, &jpeg.Options{Quality: 60}) != nil {
		return nil
	}
	return out.Bytes()
}

// recordArgs are c's arguments as the record keeps them: redacted as a
// log line's (policy.RedactArgs), but a value that is only secret
// references stays as written, so the record (and a recipe) says which
// secret went where.
func (s *Server) recordArgs(c *Call) map[string]any {
	out := policy.RedactArgs(c.Tool.Class(), c.Args)
	for _, path := range c.Tool.SecretRefs {
		var orig []string
		_ = eachString(c.Args, path, func(v string) (string, error) { orig = append(orig, v); return v, nil })
		i := 0
		out, _ = replaceStrings(out, path, func(v string) (string, error) {
			if i < len(orig) && onlyRefs.MatchString(orig[i]) {
				v = orig[i]
			}
			i++
			return v, nil
		})
	}
	return out
}

var onlyRefs = regexp.MustCompile(`^(<secret:[A-Za-z_][A-Za-z0-9_]*>)+$`)

// typedTexts are the plain texts c types (its Secrets arguments that are
// not only secret references), 3 characters or longer: shorter ones would
// scrub ordinary words out of the record.
func typedTexts(c *Call) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if len(x) >= 3 && !onlyRefs.MatchString(x) {
				out = append(out, x)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				if k == "value" || k == "text" || k == "values" {
					walk(e)
				}
			}
		}
	}
	for _, name := range c.Tool.Secrets {
		walk(c.Args[name])
	}
	return out
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// recordStage writes the call's line of the session record (serve
// --record), with its outcome, once every later stage has run.
func (s *Server) recordStage(next step) step {
	return func(ctx context.Context, c *Call) (*Result, error) {
		c.rec = s.startRecord(c)
		r, err := next(ctx, c)
		if c.rec != nil {
			s.endRecord(ctx, c, c.ex, r, err)
		}
		return r, err
	}
}
