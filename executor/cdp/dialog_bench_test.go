package cdp

import (
	"testing"

	"github.com/chromegate/chromegate/executor"
)

// BenchmarkExecutorDialogChain is a click that opens an alert, and the
// three answers that let the page's handler through its alert, confirm and
// prompt: what a dialog costs a model, in calls the server serves (each
// returns as soon as the next dialog is open).
func BenchmarkExecutorDialogChain(b *testing.B) {
	s, tab := benchTab(b, "/dialogs")
	ctx := benchCtx(b)
	click := executor.ClickParams{TargetParams: executor.TargetParams{TabID: tab, Target: executor.Target{Selector: "#go"}}}
	for b.Loop() {
		r, err := s.Click(ctx, click)
		if err != nil || len(r.Dialogs) != 1 {
			b.Fatalf("click: %v %v", r.Dialogs, err)
		}
		for range 3 {
			if _, err := s.AnswerDialog(ctx, executor.DialogParams{TabID: tab, Accept: true}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkExecutorDialogOpenRefusal is a read on a tab whose page waits
// on a dialog: DIALOG_OPEN, without a round trip to the blocked page.
func BenchmarkExecutorDialogOpenRefusal(b *testing.B) {
	s, tab := benchTab(b, "/dialogs")
	ctx := benchCtx(b)
	if _, err := s.Click(ctx, executor.ClickParams{TargetParams: executor.TargetParams{TabID: tab, Target: executor.Target{Selector: "#go"}}}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		for range 3 {
			_, _ = s.AnswerDialog(benchCtx(b), executor.DialogParams{TabID: tab, Accept: false})
		}
	})
	for b.Loop() {
		if _, err := s.Text(ctx, executor.TextParams{TabID: tab}); executor.CodeOf(err) != executor.CodeDialogOpen {
			b.Fatalf("want DIALOG_OPEN, got %v", err)
		}
	}
}
