package cdp

import (
	"context"
	"encoding/base64"
	"strings"

	"github.com/chromegate/chromegate/executor"
)

// The console log of a tab (executor/console.go): read from CDP sessions
// of chromegate's own (sourcewatch.go), recorded in the tab's ring in the
// network log's generation.

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
