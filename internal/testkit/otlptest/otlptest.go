// Package otlptest is an OpenTelemetry collector for tests: a real
// OTLP/HTTP trace receiver on a loopback port that decodes each export
// (the protobuf of go.opentelemetry.io/proto/otlp) and keeps its spans,
// so a test asserts what a real exporter sent over the wire.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// A Span is one exported span, flattened.
type Span struct {
	Name         string
	TraceID      string // hex
	SpanID       string // hex
	ParentSpanID string // hex; "" for a root
	TraceState   string
	Kind         string
	Attrs        map[string]string // every value as text
	Events       []string          // each event's name and attributes, as text
	Status       string            // the status code's name
	Service      string            // the resource's service.name
	Start, End   time.Time
}

// Receiver is the collector. Its URL takes exports at /v1/traces.
type Receiver struct {
	URL string // the base URL, e.g. http://127.0.0.1:PORT

	mu      sync.Mutex
	spans   []Span
	exports int
	changed chan struct{}
}

// Start serves a Receiver on loopback until the test ends.
func Start(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{changed: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.NotFound(w, req)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &msg); err != nil {
		http.Error(w, "not an OTLP trace export: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.add(flatten(&msg))
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (r *Receiver) add(spans []Span) {
	r.mu.Lock()
	r.spans = append(r.spans, spans...)
	r.exports++
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

func flatten(msg *coltrace.ExportTraceServiceRequest) []Span {
	var out []Span
	for _, rs := range msg.GetResourceSpans() {
		service := attrs(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{
					Name: s.GetName(), TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentSpanID: hex.EncodeToString(s.GetParentSpanId()), TraceState: s.GetTraceState(),
					Kind: s.GetKind().String(), Attrs: attrs(s.GetAttributes()), Status: s.GetStatus().GetCode().String(),
					Service: service,
					Start:   time.Unix(0, int64(s.GetStartTimeUnixNano())), End: time.Unix(0, int64(s.GetEndTimeUnixNano())),
				}
				for _, e := range s.GetEvents() {
					sp.Events = append(sp.Events, fmt.Sprint(e.GetName(), attrs(e.GetAttributes())))
				}
				out = append(out, sp)
			}
		}
	}
	return out
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.GetKey()] = value(kv.GetValue())
	}
	return m
}

func value(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	case *commonpb.AnyValue_BytesValue:
		return string(x.BytesValue)
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, value(e))
		}
		return fmt.Sprint(parts)
	case *commonpb.AnyValue_KvlistValue:
		return fmt.Sprint(attrs(x.KvlistValue.GetValues()))
	}
	return ""
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Wait returns the spans once ok accepts them, or fails the test when
// none did by the deadline (exports are batched: they arrive when the
// exporter flushes).
func (r *Receiver) Wait(t testing.TB, within time.Duration, ok func([]Span) bool) []Span {
	t.Helper()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		spans, changed := append([]Span(nil), r.spans...), r.changed
		r.mu.Unlock()
		if ok(spans) {
			return spans
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("the receiver has %d spans, not the ones the test waits for:\n%s", len(spans), Dump(spans))
			return nil
		}
	}
}

// Dump writes spans one a line, for a failure message.
func Dump(spans []Span) string {
	s := ""
	for _, sp := range spans {
		s += fmt.Sprintf("%s trace=%s span=%s parent=%s %v events=%v\n", sp.Name, sp.TraceID, sp.SpanID, sp.ParentSpanID, sp.Attrs, sp.Events)
	}
	return s
}

// Under says whether below root is a chain of spans by these names, each
// the parent of the next.
func Under(spans []Span, root Span, names ...string) bool {
	if len(names) == 0 {
		return true
	}
	for _, sp := range spans {
		if sp.ParentSpanID == root.SpanID && sp.Name == names[0] && Under(spans, sp, names[1:]...) {
			return true
		}
	}
	return false
}

// Count counts the spans whose name starts with prefix.
func Count(spans []Span, prefix string) int {
	n := 0
	for _, s := range spans {
		if strings.HasPrefix(s.Name, prefix) {
			n++
		}
	}
	return n
}

// Leaks reports every span whose name, events or attributes (keys and
// values) hold one of needles: what a trace must never carry.
func Leaks(spans []Span, needles ...string) []string {
	var out []string
	for _, sp := range spans {
		all := sp.Name + " " + strings.Join(sp.Events, " ")
		for k, v := range sp.Attrs {
			all += " " + k + "=" + v
		}
		for _, n := range needles {
			if n != "" && strings.Contains(all, n) {
				out = append(out, fmt.Sprintf("span %s carries %q: %s", sp.Name, n, all))
			}
		}
	}
	return out
}
