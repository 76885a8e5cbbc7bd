package mcp

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestSDKSessionNotesDemoted: the SDK's per-session notes are debug lines,
// its other records keep their level.
func TestSDKSessionNotesDemoted(t *testing.T) {
	var b bytes.Buffer
	l := sdkLog(slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelInfo})))
	l.Info("server session connected", "session_id", "")
	l.Info("something else")
	l.Error("failed to connect")
	out := b.String()
	if strings.Contains(out, "server session connected") || !strings.Contains(out, "something else") || !strings.Contains(out, "failed to connect") {
		t.Errorf("at info:\n%s", out)
	}
	b.Reset()
	sdkLog(slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug}))).Info("server connecting")
	if !strings.Contains(b.String(), "level=DEBUG") {
		t.Errorf("at debug: %s", b.String())
	}
}
