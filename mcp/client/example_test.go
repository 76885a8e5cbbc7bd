package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os/exec"

	"github.com/chromegate/chromegate/mcp/client"
)

// A client that starts chromegate over stdio, reads a page, and tells a
// policy denial from other failures.
func Example() {
	ctx := context.Background()
	c, err := client.ConnectStdio(ctx, exec.Command("chromegate", "serve", "--allow-domain", "example.com"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	page, err := c.Navigate(ctx, client.NavigateParams{URL: "https://example.com/"})
	if err != nil {
		log.Fatal(err)
	}
	h1, err := c.GetText(ctx, client.GetTextParams{Selector: "h1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(page.Title, h1.Text)

	_, err = c.Navigate(ctx, client.NavigateParams{URL: "https://example.org/"})
	if errors.Is(err, &client.Error{Code: "POLICY_DENIED"}) {
		fmt.Println("denied:", err)
	}
}
