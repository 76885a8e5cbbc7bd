package ext

import (
	"context"
	"encoding/base64"
	"path/filepath"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/ext/wire"
)

// The console log of a tab the extension drives is kept by the extension
// (extension/consolelog.js, from the Runtime domain of its chrome.debugger
// session); its bounds are applied here once more, so that a message the
// wire carried is no longer than one the cdp backend records.

// Console implements executor.Executor.
func (e *Executor) Console(ctx context.Context, p executor.ConsoleParams) (executor.ConsoleLog, error) {
	out, err := do[executor.ConsoleLog](ctx, e, wire.MethodConsole, &p.TabID, &p)
	if err != nil {
		return out, err
	}
	if out.Messages == nil {
		out.Messages = []executor.ConsoleMessage{}
	}
	if len(out.Messages) > executor.MaxConsoleEntries {
		out.Dropped += len(out.Messages) - executor.MaxConsoleEntries
		out.Messages = out.Messages[len(out.Messages)-executor.MaxConsoleEntries:]
	}
	for i, m := range out.Messages {
		m = executor.BoundConsole(m)
		if !validLevel(m.Level) {
			m.Level = executor.LevelLog
		}
		out.Messages[i] = m
	}
	return out, nil
}

func validLevel(l string) bool {
	for _, v := range executor.ConsoleLevels {
		if l == v {
			return true
		}
	}
	return false
}

// pdfReply is the extension's answer to "pdf": the PDF as base64, read
// from Page.printToPDF's stream and stopped at maxBytes.
type pdfReply struct {
	executor.PageState
	Data string `json:"data"`
}

// PDF implements executor.Executor: the extension prints, the server
// stores (the extension cannot write into the server's directory).
func (e *Executor) PDF(ctx context.Context, p executor.PDFParams) (executor.PDFResult, error) {
	if _, err := p.PrintParams(); err != nil {
		return executor.PDFResult{}, err
	}
	limit := min(p.Limit(), e.be.opts.MaxDownloadBytes)
	p.MaxBytes = limit
	out, err := do[pdfReply](ctx, e, wire.MethodPDF, &p.TabID, &p)
	if err != nil {
		return executor.PDFResult{}, err
	}
	if int64(base64.StdEncoding.DecodedLen(len(out.Data))) > limit+3 {
		return executor.PDFResult{}, executor.PDFTooBig(-1, limit)
	}
	data, err := base64.StdEncoding.DecodeString(out.Data)
	if err != nil {
		return executor.PDFResult{}, executor.Errorf(executor.CodeInternal, "the extension's PDF is not base64: %v", err)
	}
	res, err := executor.SavePDF(executor.TenantRoot(filepath.Join(e.be.opts.DataDir, "downloads"), p.Tenant), p.Filename, data, limit)
	if err != nil {
		return executor.PDFResult{}, err
	}
	res.PageState = out.PageState
	return res, nil
}
