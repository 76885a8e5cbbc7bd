package cdp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/playwright-community/playwright-go"
)

// extensionArgs load the extension into a launched browser.
func (b *Backend) extensionArgs() []string {
	if b.opts.ExtensionDir == "" {
		return nil
	}
	return []string{"--disable-extensions-except=" + b.opts.ExtensionDir, "--load-extension=" + b.opts.ExtensionDir}
}

// ignoredArgs drops Playwright's --disable-extensions when the extension
// is to be loaded.
func (b *Backend) ignoredArgs() []string {
	if b.opts.ExtensionDir == "" {
		return nil
	}
	return []string{"--disable-extensions"}
}

// pairTimeout bounds handing the pairing to one service worker.
const pairTimeout = 10 * time.Second

// watchExtension pairs every service worker of chromegate's extension
// that runs in c: the one already started and any that starts later (MV3
// stops idle workers; a new one finds its pairing in storage, and this
// hands it over again in case storage was cleared).
func (in *instance) watchExtension(c playwright.BrowserContext) {
	b := in.b
	if b.opts.ExtensionDir == "" || b.opts.PairExtension == nil {
		return
	}
	prefix := "chrome-extension://" + b.opts.ExtensionID + "/"
	pair := func(w playwright.Worker) {
		if !strings.HasPrefix(w.URL(), prefix) {
			return
		}
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), pairTimeout)
			defer cancel()
			eval := func(ctx context.Context, fn string, arg any) error {
				errc := make(chan error, 1)
				go func() {
					defer func() {
						if r := recover(); r != nil {
							errc <- fmt.Errorf("evaluate in the service worker: %v", r)
						}
					}()
					_, err := w.Evaluate(fn, arg)
					errc <- err
				}()
				select {
				case err := <-errc:
					return err
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			if err := b.opts.PairExtension(ctx, eval); err != nil {
				in.log.Warn("could not pair the extension over CDP", "err", err)
				return
			}
			in.log.Info("extension paired over CDP")
		}()
	}
	c.On("serviceworker", pair)
	for _, w := range c.ServiceWorkers() {
		pair(w)
	}
}
