package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// sessionHeader presents a browser context to a chromegate server over
// HTTP (httpapi.SessionHeader).
const sessionHeader = "X-Chromegate-Session"

// presentHandle adds the minted handle, once there is one, to every
// request that does not name a context itself.
type presentHandle struct {
	base   http.RoundTripper
	handle atomic.Pointer[string]
}

func (p *presentHandle) RoundTrip(req *http.Request) (*http.Response, error) {
	if h := p.handle.Load(); h != nil && req.Header.Get(sessionHeader) == "" {
		req = req.Clone(req.Context())
		req.Header.Set(sessionHeader, *h)
	}
	return p.base.RoundTrip(req)
}

// mintHandle asks the server at endpoint (…/mcp) for a browser context
// of the caller's own.
func mintHandle(ctx context.Context, hc *http.Client, endpoint string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(endpoint, "/")+"/sessions", nil)
	if err != nil {
		return "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("chromegate: minting a session: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var out struct {
		Session string `json:"session"`
	}
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(body, &out) != nil || out.Session == "" {
		return "", fmt.Errorf("chromegate: minting a session: %s: %s", resp.Status, snippet(body))
	}
	return out.Session, nil
}

// dropHandle closes the minted context (DELETE …/mcp/sessions/HANDLE).
func dropHandle(hc *http.Client, endpoint, handle string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, strings.TrimSuffix(endpoint, "/")+"/sessions/"+handle, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("chromegate: closing the session: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("chromegate: closing the session: %s", resp.Status)
	}
	return nil
}
