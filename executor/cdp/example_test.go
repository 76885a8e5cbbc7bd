package cdp_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/cdp"
)

// A backend launches headless Chromium on the first Open; the executor it
// returns drives the browser through the primitives of the contract.
func Example() {
	b, err := cdp.New(cdp.Options{Isolated: true})
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ex, err := b.Open(ctx, "")
	if err != nil {
		log.Fatal(err) // an *executor.Error; its Hint says how to fix the set-up
	}
	nav, err := ex.Navigate(ctx, executor.NavigateParams{URL: "https://example.com/"})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := ex.Click(ctx, executor.ClickParams{TargetParams: executor.TargetParams{Target: executor.Target{Selector: "a"}}}); err != nil {
		fmt.Println(executor.CodeOf(err))
	}
	fmt.Println(nav.Status, nav.Title)
}

// Setting up the driver is a one-time step, `chromegate setup`.
func ExampleInstallDriver() {
	ctx := context.Background()
	if _, err := cdp.FindDriver(""); err != nil {
		if err := cdp.InstallDriver(ctx, cdp.DefaultDriverDir(), log.Writer()); err != nil {
			log.Fatal(err)
		}
	}
}
