package executortest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/chromegate/chromegate/executor"
)

func TestFake(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := NewBackend("fake")
	m := executor.NewManager(executor.ManagerOptions{Backends: []executor.Backend{b}})
	defer m.Close()

	ex, err := m.Ready(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	f := b.Last()
	if _, err := ex.Navigate(ctx, executor.NavigateParams{URL: "https://a.test/"}); err != nil {
		t.Fatal(err)
	}
	nr, _ := ex.Back(ctx, executor.HistoryParams{})
	if nr.URL != "about:blank" {
		t.Errorf("back: %+v", nr)
	}
	if _, err := ex.Click(ctx, executor.ClickParams{TargetParams: executor.TargetParams{TabID: "fake:other:1"}}); executor.CodeOf(err) != executor.CodeStaleTab {
		t.Errorf("foreign tab id: %v", err)
	}
	f.Fail("Text", executor.Errorf(executor.CodeSelectorNotFound, "none"))
	if _, err := ex.Text(ctx, executor.TextParams{}); executor.CodeOf(err) != executor.CodeSelectorNotFound {
		t.Errorf("scripted error: %v", err)
	}
	f.Handle("Text", func(context.Context, any) (any, error) { return "wrong type", nil })
	if _, err := ex.Text(ctx, executor.TextParams{}); err == nil {
		t.Error("a handler returning the wrong type must fail the call")
	}
	want := []string{"Navigate", "Back", "Click", "Text", "Text"}
	if got := f.Methods(); !slices.Equal(got, want) {
		t.Errorf("methods %v, want %v", got, want)
	}

	f.Kill()
	<-f.Done()
	if err := ex.Ping(ctx); err == nil {
		t.Error("ping after kill")
	}
	if _, err := ex.Tabs(ctx); !errors.Is(err, &executor.Error{Code: executor.CodeTargetGone}) {
		t.Errorf("call after kill: %v", err)
	}
	if _, err := m.Ready(ctx, "s"); err != nil || b.Opens() != 2 {
		t.Errorf("reopen after kill: %v, opens %d", err, b.Opens())
	}
	// Ids from the first browser are stale in the second.
	if _, err := b.Last().SelectTab(ctx, f.TabID(0)); executor.CodeOf(err) != executor.CodeStaleTab {
		t.Errorf("id across a relaunch: %v", err)
	}
}
