package executor_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/chromegate/chromegate/executor"
)

func TestRedactHeaders(t *testing.T) {
	t.Parallel()
	in := []executor.Header{
		{Name: "User-Agent", Value: "ua"},
		{Name: "Cookie", Value: "sid=s3cret"},
		{Name: "authorization", Value: "Bearer t0ken"},
		{Name: "Proxy-Authorization", Value: "Basic dXNlcjpwYXNz"},
		{Name: "Set-Cookie", Value: "a=1"},
		{Name: "set-cookie", Value: "b=2"},
		{Name: " Cookie2 ", Value: "old"},
		{Name: "Accept", Value: "*/*"},
	}
	got := executor.RedactHeaders(in)
	want := []executor.Header{
		{Name: " Cookie2 ", Value: executor.Redacted},
		{Name: "Accept", Value: "*/*"},
		{Name: "authorization", Value: executor.Redacted},
		{Name: "Cookie", Value: executor.Redacted},
		{Name: "Proxy-Authorization", Value: executor.Redacted},
		{Name: "Set-Cookie", Value: executor.Redacted},
		{Name: "set-cookie", Value: executor.Redacted},
		{Name: "User-Agent", Value: "ua"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RedactHeaders (-want +got):\n%s", diff)
	}
	for _, h := range got {
		for _, secret := range []string{"s3cret", "t0ken", "dXNlcjpwYXNz", "a=1", "b=2", "old"} {
			if strings.Contains(h.Value, secret) {
				t.Errorf("%s: %q leaks %q", h.Name, h.Value, secret)
			}
		}
	}
	if in[1].Value != "sid=s3cret" {
		t.Error("RedactHeaders changed its input")
	}
	if executor.RedactHeaders(nil) != nil {
		t.Error("nil headers are not nil")
	}
	// Repeated names keep their order.
	var sc []string
	for _, h := range executor.RedactHeaders([]executor.Header{{Name: "X", Value: "1"}, {Name: "A", Value: "a"}, {Name: "x", Value: "2"}}) {
		sc = append(sc, h.Name+"="+h.Value)
	}
	if diff := cmp.Diff([]string{"A=a", "X=1", "x=2"}, sc); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://user:pw@a.test/p?q=1@x": "https://a.test/p?q=1@x",
		"http://a.test/@b":               "http://a.test/@b",
		"https://a.test":                 "https://a.test",
		"about:blank":                    "about:blank",
		"wss://u@h:8443/ws":              "wss://h:8443/ws",
	} {
		if got := executor.RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTextBody(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("é", executor.MaxBodyBytes) // 2 bytes a rune
	tests := []struct {
		name      string
		mime      string
		body      string
		max       int
		wantLen   int
		truncated bool
		ok        bool
	}{
		{"text", "text/html; charset=utf-8", "<p>hi</p>", 0, 9, false, true},
		{"json", "application/json", `{"a":1}`, 0, 7, false, true},
		{"problem json", "application/problem+json", `{}`, 0, 2, false, true},
		{"no type, utf-8", "", "plain", 0, 5, false, true},
		{"no type, binary", "", "\xff\xfe\x00", 0, 0, false, false},
		{"image", "image/png", "\x89PNG", 0, 0, false, false},
		{"octet text", "application/octet-stream", "abc", 0, 0, false, false},
		{"capped at the default", "text/plain", big, 0, executor.MaxBodyBytes, true, true},
		{"capped over the max", "text/plain", big, 10 * executor.MaxBodyBytes, executor.MaxBodyBytes, true, true},
		{"cut on a rune", "text/plain", "aé", 2, 1, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			text, truncated, note, ok := executor.TextBody(tt.mime, []byte(tt.body), tt.max)
			if ok != tt.ok || truncated != tt.truncated || len(text) != tt.wantLen {
				t.Errorf("TextBody = %d bytes, truncated %v, ok %v (%s); want %d, %v, %v", len(text), truncated, ok, note, tt.wantLen, tt.truncated, tt.ok)
			}
			if !ok && note == "" {
				t.Error("no note says why there is no body")
			}
		})
	}
}
