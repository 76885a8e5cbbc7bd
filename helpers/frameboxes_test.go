package helpers

import (
	"testing"

	"github.com/chromegate/chromegate/executor"
)

// TestClipBox: a frame inside an allowed frame is cut to that frame's
// viewport.
func TestClipBox(t *testing.T) {
	t.Parallel()
	got := clipBox(executor.Box{X: 0, Y: 0, Width: 100, Height: 100}, &executor.Box{X: 50, Y: 60, Width: 100, Height: 10})
	if want := (executor.Box{X: 50, Y: 60, Width: 50, Height: 10}); got != want {
		t.Errorf("clipBox = %+v, want %+v", got, want)
	}
	if got := clipBox(executor.Box{X: 0, Y: 0, Width: 10, Height: 10}, &executor.Box{X: 50, Y: 50, Width: 10, Height: 10}); got.Width != 0 || got.Height != 0 {
		t.Errorf("disjoint boxes clip to %+v, want empty", got)
	}
}
