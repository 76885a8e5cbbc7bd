package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
)

// downloadBody is what /download serves; the test checks the bytes that land.
var downloadBody = []byte("chromegate download test\x00\x01\x02 binary-ish bytes\n")

const formPage = `<!doctype html><html><head><meta charset="utf-8"><title>Test form</title>
<style>#hover{width:120px;height:40px;background:#ddd} #src,#dst{width:80px;height:80px;margin:10px;display:inline-block}
#src{background:#f99} #dst{background:#9f9} #bottom{margin-top:3000px}</style></head><body>
<h1>Form</h1>
<button id="counter" onclick="this.dataset.n=(+this.dataset.n||0)+1;this.textContent='clicked '+this.dataset.n">count</button>
<button id="ctx" oncontextmenu="event.preventDefault();this.textContent='right-clicked'">right</button>
<button id="dbl" ondblclick="this.textContent='double-clicked'">dbl</button>
<input id="name" type="text" value="">
<input id="typed" type="text" value="old" onkeydown="if(event.key==='Enter')this.dataset.enter='yes'">
<textarea id="notes"></textarea>
<select id="plan"><option value="free">Free</option><option value="pro">Pro plan</option><option value="team">Team</option></select>
<select id="multi" multiple><option value="a">A</option><option value="b">B</option><option value="c">C</option></select>
<input id="files" type="file" multiple>
<div id="keys" tabindex="0" onkeydown="this.textContent=(event.ctrlKey?'Ctrl+':'')+(event.shiftKey?'Shift+':'')+event.key">keys</div>
<div id="hover" onmouseenter="this.textContent='hovered'">hover me</div>
<div id="src" draggable="true" ondragstart="event.dataTransfer.setData('text/plain','src')">drag</div>
<div id="dst" ondragover="event.preventDefault()" ondrop="event.preventDefault();this.textContent='dropped '+event.dataTransfer.getData('text/plain')">drop</div>
<a id="newtab" href="/other" target="_blank">open other</a>
<p id="para">Hello <b>world</b></p>
<div id="bottom">the bottom</div>
</body></html>`

const otherPage = `<!doctype html><html><head><title>Other page</title></head><body><h1 id="h">Other</h1><a id="back" href="/form">form</a></body></html>`

// fieldsPage has fields that take no input: a page that counts every key
// that reaches them.
const fieldsPage = `<!doctype html><html><head><meta charset="utf-8"><title>Fields</title></head><body>
<label>Disabled <input id="off" value="locked" disabled></label>
<label>Read-only <input id="ro" value="fixed" readonly onkeydown="this.dataset.keys=(this.dataset.keys||'')+event.key"></label>
<label>Notes <textarea id="rotext" readonly>kept</textarea></label>
<label>Open <input id="open" value=""></label>
</body></html>`

const dialogPage = `<!doctype html><html><head><title>Dialogs</title></head><body>
<button id="alert" onclick="alert('hello from alert');this.textContent='after alert'">alert</button>
<button id="confirm" onclick="this.textContent='confirm='+confirm('sure?')">confirm</button>
<button id="prompt" onclick="this.textContent='prompt='+prompt('name?','default-answer')">prompt</button>
</body></html>`

const slowPage = `<!doctype html><html><head><title>Slow</title></head><body>
<script>setTimeout(()=>{const d=document.createElement('div');d.id='late';d.textContent='arrived late';document.body.appendChild(d)},700);
setTimeout(()=>{document.getElementById('going').remove()},700);</script>
<div id="going">going away</div></body></html>`

// site serves the pages the e2e tests use on a loopback port.
func site(t testing.TB) string {
	t.Helper()
	mux := http.NewServeMux()
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		}
	}
	mux.HandleFunc("/form", page(formPage))
	mux.HandleFunc("/other", page(otherPage))
	mux.HandleFunc("/dialogs", page(dialogPage))
	mux.HandleFunc("/slow", page(slowPage))
	mux.HandleFunc("/fields", page(fieldsPage))
	mux.HandleFunc("/tall", page(`<!doctype html><html><head><title>Tall</title></head><body style="margin:0"><div style="height:20000px;background:linear-gradient(#fff,#00f)">tall</div></body></html>`))
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>Big</title><body><p id=big>%s</p></body>", strings.Repeat("lorem ipsum ", 40000))
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(60 * time.Second):
		}
	})
	mux.HandleFunc("/cookies", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		for _, c := range r.Cookies() {
			fmt.Fprintf(w, "%s=%s\n", c.Name, c.Value)
		}
	})
	mux.HandleFunc("/download", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="../../etc/report:2026.bin"`)
		_, _ = w.Write(downloadBody)
	})
	mux.HandleFunc("/downloads", page(`<!doctype html><title>Downloads</title><a id="dl" href="/download" download>get report</a>`))
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/other", http.StatusFound)
	})

	return testkit.Serve(t, mux)
}
