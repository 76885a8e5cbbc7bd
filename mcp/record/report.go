package record

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"io"
	"slices"
	"strings"
	"time"
)

//go:embed report.css
var reportCSS string

//go:embed report.js
var reportJS string

// Report writes r as one self-contained HTML page: a timeline of the calls
// with their screenshots inline (data: URIs), denials highlighted, and
// filters by tool and outcome. It makes no request: its Content Security
// Policy allows only its own style and script (by hash) and data: images.
// Everything the record holds is escaped (html/template).
func Report(w io.Writer, r *Record) error {
	type item struct {
		Entry
		Shot    template.URL
		ArgsTxt string
		Step    bool
	}
	v := struct {
		CSP         string
		CSS         template.CSS
		JS          template.JS
		Dir         string
		Items       []item
		Tools       []string
		Calls, Deny int
		Errors      int
		From, To    string
	}{CSS: template.CSS(reportCSS), JS: template.JS(reportJS), Dir: r.Dir}
	v.CSP = "default-src 'none'; img-src data:; style-src 'sha256-" + hash(reportCSS) + "'; script-src 'sha256-" + hash(reportJS) + "'; base-uri 'none'; form-action 'none'"
	for _, e := range r.Entries {
		it := item{Entry: e, Step: e.Plugin != ""}
		if img := r.Image(e); len(img) > 0 {
			it.Shot = template.URL("data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(img))
		}
		if len(e.Args) > 0 {
			it.ArgsTxt = compactJSON(e.Args)
		}
		v.Items = append(v.Items, it)
		if e.Truncated {
			continue
		}
		v.Calls++
		switch e.Decision {
		case "deny":
			v.Deny++
		case "error":
			v.Errors++
		}
		if !slices.Contains(v.Tools, e.Tool) {
			v.Tools = append(v.Tools, e.Tool)
		}
	}
	slices.Sort(v.Tools)
	if n := len(r.Entries); n > 0 {
		v.From, v.To = r.Entries[0].Time.Format(time.RFC3339), r.Entries[n-1].Time.Format(time.RFC3339)
	}
	return reportTmpl.Execute(w, v)
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.StdEncoding.EncodeToString(sum[:])
}

var reportTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"join": strings.Join,
	"ts":   func(t time.Time) string { return t.Format("15:04:05.000") },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<meta name="referrer" content="no-referrer">
<title>chromegate session report</title>
<style>{{.CSS}}</style>
</head><body>
<header>
<h1>chromegate session report</h1>
<p class="meta">{{.Calls}} calls, <span class="n-deny">{{.Deny}} denied</span>, {{.Errors}} failed{{if .From}}, {{.From}} – {{.To}}{{end}}</p>
<form id="filters" aria-label="Filters">
<label>Tool <select id="f-tool"><option value="">all</option>{{range .Tools}}<option>{{.}}</option>{{end}}</select></label>
<label>Outcome <select id="f-outcome"><option value="">all</option><option value="allow">allowed</option><option value="deny">denied</option><option value="error">failed</option></select></label>
<span id="shown" aria-live="polite"></span>
</form>
</header>
<main>
<ol id="timeline">
{{range .Items}}{{if .Truncated}}<li class="truncated">The record reached its size cap here; later calls were not recorded.</li>
{{else}}<li class="entry {{.Decision}}{{if .Step}} step{{end}}" data-tool="{{.Tool}}" data-outcome="{{.Decision}}">
<div class="head"><span class="seq">#{{.Seq}}</span> <time>{{ts .Time}}</time> <b class="tool">{{.Tool}}</b>{{if .Plugin}} <span class="plugin">step of {{.Plugin}}</span>{{end}} <span class="badge">{{.Decision}}</span> <span class="ms">{{.DurationMs}} ms</span></div>
{{if .ArgsTxt}}<pre class="args">{{.ArgsTxt}}</pre>{{end}}
{{if .Target}}<p class="target">target: {{.Target.Role}} “{{.Target.Name}}”</p>{{end}}
{{if .Code}}<p class="error"><b>{{.Code}}</b>{{if not .Reasons}}: {{.Message}}{{end}}</p>{{end}}
{{if .Reasons}}<ul class="reasons">{{range .Reasons}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .URL}}<p class="page">{{.URL}}{{if .Title}} — {{.Title}}{{end}}</p>{{end}}
{{if .Summary}}<pre class="summary">{{.Summary}}</pre>{{end}}
{{if .Denied}}<div class="denied"><b>blocked requests</b><ul>{{range .Denied}}<li>{{.Method}} {{.URL}} — {{.Reason}}</li>{{end}}</ul></div>{{end}}
{{if .Console}}<div class="console"><b>console errors</b><ul>{{range .Console}}<li>{{.}}</li>{{end}}</ul></div>{{end}}
{{if .Shot}}<img class="shot" alt="the page after call {{.Seq}}" src="{{.Shot}}">{{end}}
</li>
{{end}}{{end}}</ol>
</main>
<script>{{.JS}}</script>
</body></html>
`))

func compactJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}
