package helpers

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"

	"github.com/chromegate/chromegate/executor"
)

// FrameDecider decides whether the caller may read a frame's document,
// described by its URL and security origin as the browser has them (as a
// page is): nil allows it, anything else denies it. The server passes its
// policy down this way (mcp: Call.FrameDecider), so helpers never needs
// to know what a policy is.
type FrameDecider func(ctx context.Context, rawURL, origin string) error

// Frames of other origins in an outline: at most maxFrameDepth deep and
// maxFrames in one outline; past that a frame is a placeholder.
const (
	maxFrameDepth = 6
	maxFrames     = 40
)

// rawOutline is snapshot.js's answer when the document has frames of
// other origins: every line, unpaged.
type rawOutline struct {
	Lines  []string `json:"lines"`
	RunOf  []int    `json:"runOf"`
	Frames []struct {
		Line  int    `json:"line"`
		Depth int    `json:"depth"`
		Ref   string `json:"ref"`
		Name  string `json:"name"`
	} `json:"frames"`
	// Cut says the document's outline cut something (see CutNote).
	Cut bool `json:"cut"`
}

// frameOutliner splices the outlines of frames of other origins into an
// outline, each decided first.
type frameOutliner struct {
	ex     executor.Executor
	fr     executor.FrameReader // nil: the backend reaches no such frame
	decide FrameDecider         // nil: no frame is read
	tabID  string
	arg    map[string]any // the snapshot arguments every document runs with
	count  int
	cut    bool // a frame's outline cut something
}

// splice returns raw's lines with every frame's outline (or placeholder)
// in place: lines and, for each, the index of its list head or -1.
func (o *frameOutliner) splice(ctx context.Context, raw rawOutline, level int) ([]string, []int, error) {
	var lines []string
	var runOf []int
	fi := 0
	for i, l := range raw.Lines {
		head := -1
		if i < len(raw.RunOf) && raw.RunOf[i] >= 0 {
			head = raw.RunOf[i] + (len(lines) - i) // shifted by what was spliced before
		}
		if fi < len(raw.Frames) && raw.Frames[fi].Line == i {
			f := raw.Frames[fi]
			fi++
			pad := strings.Repeat(" ", f.Depth)
			sub, subRun, note, err := o.frame(ctx, f.Ref, level)
			if err != nil {
				return nil, nil, err
			}
			if note != "" {
				lines = append(lines, pad+"iframe"+nameThen(f.Name, "["+note+"]"))
				runOf = append(runOf, -1)
				continue
			}
			lines = append(lines, l)
			runOf = append(runOf, -1)
			base := len(lines)
			for j, sl := range sub {
				lines = append(lines, pad+" "+sl)
				if subRun[j] >= 0 {
					runOf = append(runOf, base+subRun[j])
				} else {
					runOf = append(runOf, -1)
				}
			}
			continue
		}
		lines = append(lines, l)
		runOf = append(runOf, head)
	}
	return lines, runOf, nil
}

// frame outlines the document of the frame whose element is ref, or says
// why not (note): never a word of a document the caller may not read.
func (o *frameOutliner) frame(ctx context.Context, ref string, level int) (sub []string, subRun []int, note string, err error) {
	if o.fr == nil || o.decide == nil {
		return nil, nil, "not shown", nil
	}
	if level >= maxFrameDepth || o.count >= maxFrames {
		return nil, nil, "not shown: too many frames", nil
	}
	o.count++
	doc, err := o.fr.FrameDocument(ctx, executor.FrameParams{TabID: o.tabID, Ref: ref})
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, "", err
		}
		return nil, nil, "not shown", nil // gone, or not yet there
	}
	if strings.HasPrefix(doc.URL, "chrome-error:") {
		// the browser's error page: the load was refused (the egress
		// boundary, say) or failed; nothing of it is the frame's
		return nil, nil, "not loaded", nil
	}
	host := hostOf(doc.URL)
	if err := o.decide(ctx, doc.URL, doc.Origin); err != nil {
		if ctx.Err() != nil {
			return nil, nil, "", err
		}
		return nil, nil, host + ": not allowed", nil
	}
	r, err := o.ex.RunScript(ctx, executor.ScriptParams{TabID: o.tabID, Source: snapshotSource, Doc: doc.Doc, Arg: mustJSON(o.arg)})
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, "", err
		}
		return nil, nil, host + ": not shown", nil
	}
	// The outline is the document's own word on where it is: decided
	// again, so a frame that navigated between the decision and the
	// outline (its token then names no document and the run fails) or
	// that is not what FrameDocument said is never shown.
	raw, where, err := o.decode(r.Value)
	if err != nil {
		return nil, nil, host + ": not shown", nil
	}
	if where.URL != doc.URL || where.Origin != doc.Origin {
		if err := o.decide(ctx, where.URL, where.Origin); err != nil {
			return nil, nil, hostOf(where.URL) + ": not allowed", nil
		}
	}
	o.cut = o.cut || raw.Cut
	lines, runOf, err := o.splice(ctx, raw, level+1)
	if err != nil {
		return nil, nil, "", err
	}
	if len(lines) == 0 {
		return []string{"(nothing visible)"}, []int{-1}, "", nil
	}
	return lines, runOf, "", nil
}

// where is the document a snapshot ran in, as it reported it.
type where struct {
	URL    string `json:"url"`
	Origin string `json:"origin"`
}

// decode reads a frame document's snapshot (run with raw: every line,
// and where it ran).
func (o *frameOutliner) decode(v json.RawMessage) (rawOutline, where, error) {
	var out struct {
		rawOutline
		scriptError
		Where where `json:"where"`
	}
	if err := json.Unmarshal(v, &out); err != nil {
		return rawOutline{}, where{}, err
	}
	if out.Error != "" {
		return rawOutline{}, where{}, errors.New(out.Error)
	}
	if out.Where.URL == "" || len(out.RunOf) != len(out.Lines) {
		return rawOutline{}, where{}, errors.New("the frame's snapshot did not say where it ran")
	}
	return out.rawOutline, out.Where, nil
}

// page cuts lines to a page of at most max characters from line offset,
// as snapshot.js does: a page that starts inside a list repeats the list's
// head line first, and a page always holds at least one line.
func page(lines []string, runOf []int, offset, max int) (text string, next int) {
	total := len(lines)
	offset = min(max0(offset), total)
	var shown []string
	used := 0
	if offset < total && runOf[offset] >= 0 {
		shown = append(shown, lines[runOf[offset]])
		used += len(lines[runOf[offset]]) + 1
	}
	end := offset
	for end < total && used+len(lines[end])+1 <= max {
		used += len(lines[end]) + 1
		shown = append(shown, lines[end])
		end++
	}
	if end == offset && end < total {
		shown = append(shown, lines[end])
		end++
	}
	if end < total {
		next = end
	}
	return strings.Join(shown, "\n"), next
}

func max0(n int) int { return max(n, 0) }

// hostOf names a frame's place in a placeholder: its host, or its scheme.
func hostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	switch {
	case err != nil:
		return "a page"
	case u.Hostname() != "":
		return u.Hostname()
	case u.Scheme != "":
		return u.Scheme + ":"
	}
	return "a page"
}

// nameThen is snapshot.js's: a name to the end of the line, or quoted when
// more follows.
func nameThen(name, more string) string {
	if name == "" {
		if more == "" {
			return ""
		}
		return " " + more
	}
	if more != "" || strings.HasPrefix(name, `"`) {
		var q strings.Builder
		enc := json.NewEncoder(&q)
		enc.SetEscapeHTML(false) // as JSON.stringify
		_ = enc.Encode(name)
		s := " " + strings.TrimSuffix(q.String(), "\n")
		if more != "" {
			s += " " + more
		}
		return s
	}
	return " " + name
}

func mustJSON(v map[string]any) json.RawMessage {
	b, _ := json.Marshal(v) // plain values only: it cannot fail
	return b
}
