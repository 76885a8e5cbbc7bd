package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/ext/wire"
)

// Conn is one authenticated extension connection. Calls are multiplexed by
// id; each is answered by its own result or error frame, fails with
// TIMEOUT at its deadline (the socket stays open) and with
// EXTENSION_DISCONNECTED when the socket closes.
//
// Conn is safe for concurrent use.
type Conn struct {
	b     *Bridge
	ws    *websocket.Conn
	ext   wire.ExtInfo
	sid   string
	since time.Time

	done     chan struct{}
	doneOnce sync.Once
	closeErr atomic.Pointer[executor.Error]

	next     atomic.Uint64
	mu       sync.Mutex
	pending  map[string]chan reply
	attached map[string]bool // tabs the extension reports attached
	subs     map[int]func(string, json.RawMessage)
	nextSub  int

	out      chan []byte
	queued   atomic.Int64
	lastRecv atomic.Int64 // unix nanos

	// ctx ends when the connection closes: decisions in flight stop.
	ctx       context.Context
	cancel    context.CancelFunc
	decisions chan struct{} // a slot per request decision in flight
}

type reply struct {
	data json.RawMessage
	err  *executor.Error
}

func newConn(b *Bridge, ws *websocket.Conn, ext wire.ExtInfo, sid string) *Conn {
	c := &Conn{b: b, ws: ws, ext: ext, sid: sid, since: time.Now().UTC(), done: make(chan struct{}),
		pending: map[string]chan reply{}, attached: map[string]bool{}, out: make(chan []byte, 4096),
		decisions: make(chan struct{}, b.opts.MaxDecisions)}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.lastRecv.Store(time.Now().UnixNano())
	return c
}

// Ext describes the connected extension.
func (c *Conn) Ext() wire.ExtInfo { return c.ext }

// Done is closed when the connection is gone.
func (c *Conn) Done() <-chan struct{} { return c.done }

func (c *Conn) isClosed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// run serves the connection until it closes: a writer, a watchdog and
// the read loop.
func (c *Conn) run() {
	go c.writer()
	go c.watchdog()
	ctx := context.Background()
	for {
		_, data, err := c.ws.Read(ctx)
		if err != nil {
			code := websocket.CloseStatus(err)
			c.close(-1, "", executor.Errorf(executor.CodeExtensionDisconnected, "the extension disconnected (%s)", closeWhy(code, err)).
				WithHint("the extension reconnects by itself; retry, or check the extension's popup"))
			return
		}
		c.lastRecv.Store(time.Now().UnixNano())
		f, err := wire.Decode(data)
		if err != nil {
			c.b.log.Warn("malformed frame from the extension; closing", "err", err)
			c.close(wire.CloseProtocol, "malformed frame", executor.Errorf(executor.CodeExtensionDisconnected, "the extension sent a malformed frame: %v", err))
			return
		}
		c.handle(f)
	}
}

func closeWhy(code websocket.StatusCode, err error) string {
	if code != -1 {
		return fmt.Sprintf("close %d", code)
	}
	if errors.Is(err, context.Canceled) {
		return "closed"
	}
	return "connection lost"
}

func (c *Conn) handle(f wire.Frame) {
	switch f.Type {
	case wire.TypeResult, wire.TypeError, wire.TypePong:
		c.mu.Lock()
		ch, ok := c.pending[f.ID]
		delete(c.pending, f.ID)
		c.mu.Unlock()
		if !ok {
			return // late answer to a call that timed out or was cancelled
		}
		r := reply{data: f.Data}
		if f.Type == wire.TypeError {
			r.err = wireErr(f.Error)
		}
		ch <- r
	case wire.TypePing:
		_ = c.send(wire.Frame{V: wire.Version, Type: wire.TypePong, ID: f.ID})
	case wire.TypeEvent:
		c.event(f.Event, f.Data)
	case wire.TypeDecide:
		c.decide(f)
	}
}

func wireErr(e *wire.Error) *executor.Error {
	if e.Ref != nil {
		return executor.RefError(e.Ref.Ref, e.Ref.Failure, e.Ref.Why)
	}
	code := executor.Code(e.Code)
	if !slices.Contains(executor.AllCodes, code) {
		code = executor.CodeInternal
	}
	out := executor.Errorf(code, "%s", e.Message)
	if e.Hint != "" {
		out = out.WithHint(e.Hint)
	}
	if e.Page != "" {
		out = out.WithPage(e.Page)
	}
	return out
}

// OnEvent calls fn with every event the extension sends (name, data), on
// the connection's reader: fn must not block. stop removes it.
func (c *Conn) OnEvent(fn func(name string, data json.RawMessage)) (stop func()) {
	c.mu.Lock()
	c.nextSub++
	id := c.nextSub
	if c.subs == nil {
		c.subs = map[int]func(string, json.RawMessage){}
	}
	c.subs[id] = fn
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.subs, id)
		c.mu.Unlock()
	}
}

// event keeps what chrome_status shows about tabs, and tells the
// subscribers.
func (c *Conn) event(name string, data json.RawMessage) {
	c.mu.Lock()
	subs := make([]func(string, json.RawMessage), 0, len(c.subs))
	for _, fn := range c.subs {
		subs = append(subs, fn)
	}
	c.mu.Unlock()
	for _, fn := range subs {
		fn(name, data)
	}
	var d struct {
		TabID  string `json:"tabId"`
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(data, &d)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch name {
	case wire.EventAttached:
		c.attached[d.TabID] = true
	case wire.EventDetached, wire.EventTabClosed:
		delete(c.attached, d.TabID)
	}
}

// AttachedTabs are the raw Chrome ids of the tabs the extension's debugger
// is attached to (the tabs chromegate drives), sorted.
func (c *Conn) AttachedTabs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.attached))
	for id := range c.attached {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// send queues a frame, failing with BACKPRESSURE when more than
// MaxBuffered bytes are already waiting to be written.
func (c *Conn) send(f wire.Frame) error {
	data, err := json.Marshal(f)
	if err != nil {
		return executor.Errorf(executor.CodeBadArgs, "cannot encode the call: %v", err)
	}
	n := int64(len(data))
	if c.queued.Add(n) > c.b.opts.MaxBuffered {
		c.queued.Add(-n)
		return executor.Errorf(executor.CodeBackpressure, "more than %d bytes are waiting to reach the extension", c.b.opts.MaxBuffered).
			WithHint("wait for calls in flight to finish, then retry with smaller arguments")
	}
	select {
	case c.out <- data:
		return nil
	case <-c.done:
		c.queued.Add(-n)
		return c.gone()
	default:
		c.queued.Add(-n)
		return executor.Errorf(executor.CodeBackpressure, "too many frames are waiting to reach the extension").
			WithHint("wait for calls in flight to finish, then retry")
	}
}

func (c *Conn) writer() {
	for {
		select {
		case data := <-c.out:
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := c.ws.Write(ctx, websocket.MessageText, data)
			cancel()
			c.queued.Add(-int64(len(data)))
			if err != nil {
				c.close(-1, "", executor.Errorf(executor.CodeExtensionDisconnected, "writing to the extension failed").
					WithHint("the extension reconnects by itself; retry"))
				return
			}
		case <-c.done:
			return
		}
	}
}

// watchdog closes a connection that has been silent for three heartbeats.
func (c *Conn) watchdog() {
	hb := c.b.opts.Heartbeat
	t := time.NewTicker(hb / 2)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if time.Since(time.Unix(0, c.lastRecv.Load())) > 3*hb {
				c.close(websocket.StatusPolicyViolation, "heartbeat missed", executor.Errorf(executor.CodeExtensionDisconnected, "the extension stopped answering (no heartbeat)").
					WithHint("check that Chrome is running and the extension is enabled"))
				return
			}
		case <-c.done:
			return
		}
	}
}

// close ends the connection once: every pending call fails with why.
// code -1 means the socket is already gone.
func (c *Conn) close(code websocket.StatusCode, reason string, why *executor.Error) {
	c.doneOnce.Do(func() {
		c.closeErr.Store(why)
		close(c.done)
		c.cancel()
		c.mu.Lock()
		pending := c.pending
		c.pending = map[string]chan reply{}
		c.mu.Unlock()
		for _, ch := range pending {
			ch <- reply{err: why}
		}
		// The close handshake waits for the peer; nobody should wait on it.
		go func() {
			if code >= 0 {
				_ = c.ws.Close(code, reason)
			} else {
				_ = c.ws.CloseNow()
			}
		}()
		c.b.mu.Lock()
		if c.b.cur == c {
			c.b.setCur(nil)
		}
		c.b.mu.Unlock()
		c.b.log.Info("extension connection closed", "reason", why.Message)
	})
}

// EndCause is why the connection ended (EXTENSION_DISCONNECTED with its
// reason), nil while it lives.
func (c *Conn) EndCause() *executor.Error {
	if !c.isClosed() {
		return nil
	}
	return c.gone()
}

func (c *Conn) gone() *executor.Error {
	if e := c.closeErr.Load(); e != nil {
		return e
	}
	return executor.Errorf(executor.CodeExtensionDisconnected, "the extension is not connected")
}

// Deadlines per method: the slow ones load pages or wait.
const (
	defaultDeadline = 30 * time.Second
	slowDeadline    = 60 * time.Second
	// pageToolDeadline is the longest a page-tool command may take (the
	// MCP layer's longest timeout_ms, and a margin).
	pageToolDeadline = 125 * time.Second
)

func methodDeadline(method string) time.Duration {
	switch method {
	case wire.MethodNavigate, wire.MethodBack, wire.MethodForward, wire.MethodReload, wire.MethodNewTab,
		wire.MethodScreenshot, wire.MethodWaitFor, wire.MethodDownloadTarget:
		return slowDeadline
	case wire.MethodWebMCP:
		// A page tool may take as long as the call allows (timeout_ms up
		// to two minutes); the caller's context bounds it.
		return pageToolDeadline
	}
	return defaultDeadline
}

// Call sends a command and decodes its result into out (unless nil). The
// deadline is the earlier of ctx's and the method's; when it passes, the
// call fails with TIMEOUT, the extension is told to cancel, and the
// connection stays up for other calls.
func (c *Conn) Call(ctx context.Context, method, tabID string, params, out any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return executor.Errorf(executor.CodeBadArgs, "cannot encode the %s call: %v", method, err)
	}
	d := methodDeadline(method)
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		d = time.Until(dl)
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	id := "c" + strconv.FormatUint(c.next.Add(1), 10)
	tab := tabID
	f := wire.Frame{V: wire.Version, Type: wire.TypeCommand, ID: id, Method: method, TabID: &tab, Params: raw, TimeoutMs: max(d.Milliseconds(), 1)}
	r, err := c.exchange(ctx, f)
	if err != nil {
		return err
	}
	if r == nil {
		_ = c.send(wire.Frame{V: wire.Version, Type: wire.TypeCancel, ID: id})
		return executor.Errorf(executor.CodeTimeout, "%s through the extension did not finish within %s", method, d.Round(time.Millisecond)).
			WithHint("the page may be slow or stuck; retry with a longer timeout_ms, or check the tab")
	}
	if out != nil {
		if err := json.Unmarshal(r.data, out); err != nil {
			return executor.Errorf(executor.CodeInternal, "the extension answered %s with an unexpected shape: %v", method, err).
				WithHint("update the extension: `chromegate extension install`, then reload it")
		}
	}
	return nil
}

// exchange sends f and waits for the frame answering its id: the answer,
// the error it carries or the connection's end, or (nil, nil) when ctx
// ends first.
func (c *Conn) exchange(ctx context.Context, f wire.Frame) (*reply, error) {
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.isClosed() {
		c.mu.Unlock()
		return nil, c.gone()
	}
	c.pending[f.ID] = ch
	c.mu.Unlock()
	if err := c.send(f); err != nil {
		c.forget(f.ID)
		return nil, err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		return &r, nil
	case <-ctx.Done():
		c.forget(f.ID)
		return nil, nil
	}
}

func (c *Conn) forget(id string) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// Ping asks the extension for a pong within ctx.
func (c *Conn) Ping(ctx context.Context) error {
	r, err := c.exchange(ctx, wire.Frame{V: wire.Version, Type: wire.TypePing, ID: "p" + strconv.FormatUint(c.next.Add(1), 10)})
	if err != nil {
		return err
	}
	if r == nil {
		return executor.Errorf(executor.CodeTimeout, "the extension did not answer a ping").
			WithHint("the browser may be busy; retry")
	}
	return nil
}
