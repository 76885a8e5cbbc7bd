package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxLineBytes bounds one inbound JSON-RPC line of a LineTransport.
const DefaultMaxLineBytes = 16 << 20

// LineTransport is an MCP transport over newline-delimited JSON-RPC (stdio).
//
// It exists because the SDK's StdioTransport ends the session on the first
// line that is not a JSON-RPC message. LineTransport answers such a line
// with a JSON-RPC error instead — -32700 for text that is not JSON, -32600
// for JSON that is not a request or notification, or is larger than
// MaxLineBytes — and goes on reading. Batches (JSON arrays) are refused with
// -32600: protocol 2025-06-18 and later have no batching.
type LineTransport struct {
	Reader io.ReadCloser
	Writer io.WriteCloser
	// MaxLineBytes bounds one line; 0 means DefaultMaxLineBytes.
	MaxLineBytes int
}

// Connect implements sdk.Transport.
func (t *LineTransport) Connect(context.Context) (sdk.Connection, error) {
	max := t.MaxLineBytes
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	c := &lineConn{
		r:        t.Reader,
		w:        t.Writer,
		incoming: make(chan lineRead),
		closed:   make(chan struct{}),
	}
	go c.readLoop(max)
	return c, nil
}

type lineRead struct {
	msg jsonrpc.Message
	err error
}

type lineConn struct {
	r io.ReadCloser
	w io.WriteCloser

	wmu sync.Mutex // serialises writes: responses and errors interleave

	incoming  chan lineRead
	closed    chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// readLoop reads lines until the reader fails, passing messages on and
// answering malformed lines itself.
func (c *lineConn) readLoop(max int) {
	br := bufio.NewReaderSize(c.r, 64<<10)
	var line []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && len(bytes.TrimSpace(line)) == 0 {
			// EOF or a read error, with no partial message worth answering.
			c.deliver(lineRead{err: err})
			return
		}
		switch {
		case tooLong:
			c.writeError(jsonrpc.CodeInvalidRequest, fmt.Sprintf("message larger than %d bytes", max))
		default:
			c.handleLine(bytes.TrimSpace(line))
		}
		line, tooLong = nil, false // a fresh buffer: a decoded message may keep the old one
		if err != nil {
			c.deliver(lineRead{err: err})
			return
		}
	}
}

func (c *lineConn) handleLine(line []byte) {
	if len(line) == 0 {
		return
	}
	if !json.Valid(line) {
		c.writeError(jsonrpc.CodeParseError, "parse error: the line is not JSON")
		return
	}
	if line[0] == '[' {
		c.writeError(jsonrpc.CodeInvalidRequest, "JSON-RPC batches are not supported")
		return
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		c.writeError(jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
		return
	}
	c.deliver(lineRead{msg: msg})
}

func (c *lineConn) deliver(r lineRead) {
	select {
	case c.incoming <- r:
	case <-c.closed:
	}
}

// writeError answers a line that had no usable id: JSON-RPC says the id is
// then null.
func (c *lineConn) writeError(code int64, msg string) {
	b, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   any    `json:"error"`
	}{"2.0", nil, map[string]any{"code": code, "message": msg}}) // plain values always marshal
	_ = c.writeLine(b)
}

func (c *lineConn) writeLine(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.closed:
		return io.ErrClosedPipe
	default:
	}
	_, err := c.w.Write(append(b, '\n'))
	return err
}

// Read implements sdk.Connection.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case r := <-c.incoming:
		return r.msg, r.err
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write implements sdk.Connection.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeLine(b)
}

// Close implements sdk.Connection. It may be called more than once.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.closeErr = errors.Join(c.r.Close(), c.w.Close())
	})
	return c.closeErr
}

// SessionID implements sdk.Connection: stdio has no session id.
func (c *lineConn) SessionID() string { return "" }
