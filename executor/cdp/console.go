package cdp

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/playwright-community/playwright-go"
)

// The console log of a tab (executor/console.go): Playwright's console and
// pageerror events, recorded in the tab's ring in the network log's
// generation. The handlers run on playwright-go's dispatch goroutine and
// make no round trip: what they record is what the event carried.

// watchConsole records p's console messages and uncaught exceptions in t.
func (t *tab) watchConsole(p playwright.Page) {
	p.OnConsole(func(m playwright.ConsoleMessage) {
		msg := executor.ConsoleMessage{
			Level: executor.ConsoleLevel(m.Type()), Text: m.Text(),
			Page: p.URL(), TimeMs: time.Now().UnixMilli(), Nav: t.net.generation(),
		}
		if loc := m.Location(); loc != nil {
			msg.URL = loc.URL
			// Playwright's location is 0-based; the tools' is 1-based.
			msg.Line, msg.Column = loc.LineNumber+1, loc.ColumnNumber+1
			if loc.URL == "" && loc.LineNumber == 0 && loc.ColumnNumber == 0 {
				msg.Line, msg.Column = 0, 0
			}
		}
		t.con.Add(msg)
	})
	p.OnPageError(func(err error) {
		msg := executor.ConsoleMessage{
			Level: executor.LevelError, Exception: true, Page: p.URL(),
			TimeMs: time.Now().UnixMilli(), Nav: t.net.generation(),
		}
		var pe *playwright.Error
		if errors.As(err, &pe) {
			msg.Text = exceptionText(pe.Name, pe.Message)
			msg.Stack = pe.Stack
		} else if err != nil {
			msg.Text = exceptionText("", err.Error())
		}
		msg.URL, msg.Line, msg.Column = executor.StackLocation(msg.Stack)
		t.con.Add(msg)
	})
}

// exceptionText is how DevTools names an uncaught exception.
func exceptionText(name, message string) string {
	if name != "" && !strings.HasPrefix(message, name) {
		message = name + ": " + message
	}
	return "Uncaught " + message
}

// generation is the log's current generation.
func (l *netLog) generation() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.nav
}

// Console implements executor.Executor.
func (s *Session) Console(ctx context.Context, p executor.ConsoleParams) (executor.ConsoleLog, error) {
	var out executor.ConsoleLog
	st, err := s.onTab(ctx, p.TabID, "console_messages", func(c *call) error {
		nav := c.t.net.generation()
		ms, dropped := c.t.con.List(nav, p.Navigations)
		out = executor.ConsoleLog{Messages: ms, Nav: nav, Dropped: dropped}
		return nil
	})
	out.PageState = st
	return out, err
}

// pdfChunk is how much of a PDF stream one IO.read asks for.
const pdfChunk = 1 << 20

// PDF implements executor.Executor: CDP's Page.printToPDF on a session of
// the tab's page, read as a stream so that a PDF over the cap is stopped
// at the cap, never held whole. Playwright's Page.PDF refuses a headed
// browser outright; the CDP command prints headed too in a Chrome that
// can (an older one answers "not implemented": BAD_ARGS, run headless).
func (s *Session) PDF(ctx context.Context, p executor.PDFParams) (executor.PDFResult, error) {
	args, err := p.PrintParams()
	if err != nil {
		return executor.PDFResult{}, err
	}
	limit := min(p.Limit(), s.b.opts.MaxDownloadBytes)
	var res executor.PDFResult
	st, err := s.onTab(ctx, p.TabID, "pdf", func(c *call) error {
		sess, err := c.page.Context().NewCDPSession(c.page)
		if err != nil {
			return err
		}
		defer func() { _ = sess.Detach() }()
		args["transferMode"] = "ReturnAsStream"
		v, err := sess.Send("Page.printToPDF", args)
		if err != nil {
			return printErr(err)
		}
		m, _ := v.(map[string]any)
		handle, _ := m["stream"].(string)
		if handle == "" {
			return executor.Errorf(executor.CodeInternal, "Page.printToPDF returned no stream")
		}
		defer func() { _, _ = sess.Send("IO.close", map[string]any{"handle": handle}) }()
		var data []byte
		for {
			if err := c.ctx.Err(); err != nil {
				return err
			}
			v, err := sess.Send("IO.read", map[string]any{"handle": handle, "size": pdfChunk})
			if err != nil {
				return executor.Errorf(executor.CodeInternal, "reading the PDF failed: %s", firstLine(err)).Wrap(err)
			}
			m, _ := v.(map[string]any)
			chunk, _ := m["data"].(string)
			if b, _ := m["base64Encoded"].(bool); b {
				raw, err := base64.StdEncoding.DecodeString(chunk)
				if err != nil {
					return executor.Errorf(executor.CodeInternal, "the PDF stream is not base64: %v", err)
				}
				data = append(data, raw...)
			} else {
				data = append(data, chunk...)
			}
			if int64(len(data)) > limit {
				return executor.PDFTooBig(-1, limit)
			}
			if eof, _ := m["eof"].(bool); eof {
				break
			}
		}
		res, err = executor.SavePDF(executor.TenantRoot(s.b.downloadDir(), p.Tenant), p.Filename, data, limit)
		return err
	})
	if err != nil {
		return executor.PDFResult{}, err
	}
	res.PageState = st
	return res, nil
}

// printErr maps a failed Page.printToPDF: bad page ranges are the
// caller's to fix.
func printErr(err error) error {
	msg := firstLine(err)
	if strings.Contains(msg, "Page range") || strings.Contains(msg, "page range") {
		return executor.Errorf(executor.CodeBadArgs, "the page ranges are outside the document: %s", msg).Wrap(err)
	}
	if strings.Contains(strings.ToLower(msg), "not implemented") {
		// An older Chrome prints only headless.
		return executor.Errorf(executor.CodeBadArgs, "this browser cannot print to PDF while it shows a window: %s", msg).
			WithHint("run chromegate headless (without --headed) to save PDFs").Wrap(err)
	}
	return executor.Errorf(executor.CodeInternal, "printing the page failed: %s", msg).Wrap(err)
}
