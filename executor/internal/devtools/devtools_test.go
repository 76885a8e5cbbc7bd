package devtools

import (
	"errors"
	"testing"
)

func TestDevtools(t *testing.T) {
	reply := map[string]any{"exception": map[string]any{"description": "TypeError: x is null\n    at <anonymous>:1:1"}, "text": "Uncaught"}
	if got := ExceptionText(reply); got != "TypeError: x is null" {
		t.Errorf("ExceptionText = %q", got)
	}
	if got := ExceptionText(map[string]any{"text": "Uncaught"}); got != "Uncaught" {
		t.Errorf("ExceptionText without a description = %q", got)
	}
	if Dig(reply, "exception", "missing", "deeper") != nil || Dig(nil, "a") != nil {
		t.Error("Dig through a missing step is not nil")
	}
	if !ContextGone(errors.New("protocol error: Execution context was destroyed.")) || ContextGone(errors.New("timeout")) {
		t.Error("ContextGone misreads an error")
	}
}
