package executor

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Saving a page as PDF: the backend has the browser print the tab's page
// (CDP's Page.printToPDF) and SavePDF stores the bytes in the server's
// download directory, as download_file stores a file.

// MaxPDFBytes caps a PDF a backend makes. It is below what one wire frame
// of the extension carries as base64 (wire.MaxFrameBytes, 64 MiB), so both
// backends share it.
const MaxPDFBytes = 32 << 20

// PDFParams prints a tab's page.
type PDFParams struct {
	TabID string `json:"tabId,omitempty"`
	// Format is a paper size: Letter (the default), Legal, Tabloid,
	// Ledger, A0 to A6.
	Format     string  `json:"format,omitempty"`
	Landscape  bool    `json:"landscape,omitempty"`
	Background bool    `json:"background,omitempty"` // print background graphics
	Scale      float64 `json:"scale,omitempty"`      // 0.1 to 2; 0 = 1
	// Ranges are the pages to print, as "1-5, 8"; empty = all.
	Ranges string `json:"ranges,omitempty"`
	// Filename is the name asked for (sanitised; ".pdf" added).
	Filename string `json:"filename,omitempty"`
	// MaxBytes caps the PDF: 0 or over MaxPDFBytes = MaxPDFBytes.
	MaxBytes int64 `json:"maxBytes,omitempty"`
	// Tenant is the caller's principal: the PDF lands in its own
	// directory under the downloads directory (TenantRoot).
	Tenant string `json:"-"`
}

// Limit is the cap p asks for.
func (p PDFParams) Limit() int64 {
	if p.MaxBytes <= 0 || p.MaxBytes > MaxPDFBytes {
		return MaxPDFBytes
	}
	return p.MaxBytes
}

// paperSizes are the formats' width and height in inches (Playwright's).
var paperSizes = map[string][2]float64{
	"letter": {8.5, 11}, "legal": {8.5, 14}, "tabloid": {11, 17}, "ledger": {17, 11},
	"a0": {33.1, 46.8}, "a1": {23.4, 33.1}, "a2": {16.54, 23.4}, "a3": {11.7, 16.54},
	"a4": {8.27, 11.7}, "a5": {5.83, 8.27}, "a6": {4.13, 5.83},
}

// PDFFormats lists the paper formats PDFParams.Format takes.
var PDFFormats = []string{"Letter", "Legal", "Tabloid", "Ledger", "A0", "A1", "A2", "A3", "A4", "A5", "A6"}

var rangesRe = regexp.MustCompile(`^\s*\d+(\s*-\s*\d+)?(\s*,\s*\d+(\s*-\s*\d+)?)*\s*$`)

// PrintParams are p's arguments of CDP's Page.printToPDF, checked.
func (p PDFParams) PrintParams() (map[string]any, error) {
	size, ok := paperSizes[strings.ToLower(cmpOr(p.Format, "letter"))]
	if !ok {
		return nil, Errorf(CodeBadArgs, "unknown paper format %q", p.Format).WithHint("use one of " + strings.Join(PDFFormats, ", "))
	}
	scale := p.Scale
	if scale == 0 {
		scale = 1
	}
	if scale < 0.1 || scale > 2 {
		return nil, Errorf(CodeBadArgs, "scale %g is outside 0.1 to 2", p.Scale)
	}
	if p.Ranges != "" && !rangesRe.MatchString(p.Ranges) {
		return nil, Errorf(CodeBadArgs, "page ranges %q are not like \"1-3, 5\"", p.Ranges)
	}
	return map[string]any{
		"landscape": p.Landscape, "printBackground": p.Background, "scale": scale,
		"paperWidth": size[0], "paperHeight": size[1], "pageRanges": strings.ReplaceAll(p.Ranges, " ", ""),
		"marginTop": 0.4, "marginBottom": 0.4, "marginLeft": 0.4, "marginRight": 0.4,
		"preferCSSPageSize": false,
	}, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// PDFResult says where a PDF was saved.
type PDFResult struct {
	PageState
	Path     string `json:"path"`
	Filename string `json:"filename"`
	Size     int64  `json:"size"`
	Pages    int    `json:"pages"`
	SHA256   string `json:"sha256"`
}

// PDFTooBig is the error of a PDF over its cap.
func PDFTooBig(size, limit int64) *Error {
	what := "more than"
	if size >= 0 {
		what = fmt.Sprintf("%d bytes,", size)
	}
	return Errorf(CodeDownloadFailed, "the PDF is %s over the limit of %d bytes; nothing was saved", what, limit).
		WithHint("print fewer pages (ranges), a smaller scale, or without background")
}

// SavePDF checks data is a PDF within limit, counts its pages and stores
// it in dir under name (sanitised, ".pdf" added, never replacing a file),
// mode 0600. On any failure nothing is left in dir.
func SavePDF(dir, name string, data []byte, limit int64) (PDFResult, error) {
	if int64(len(data)) > limit {
		return PDFResult{}, PDFTooBig(int64(len(data)), limit)
	}
	if !bytes.HasPrefix(data, []byte("%PDF-")) {
		return PDFResult{}, Errorf(CodeInternal, "the browser's PDF does not start like a PDF")
	}
	pages := PDFPageCount(data)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return PDFResult{}, Errorf(CodeDownloadFailed, "cannot create the download directory: %v", err).Wrap(err)
	}
	name = SanitizeFilename(cmpOr(strings.TrimSpace(name), "page-"+time.Now().UTC().Format("20060102-150405")))
	if !strings.EqualFold(filepath.Ext(name), ".pdf") {
		name += ".pdf"
	}
	tmp := filepath.Join(dir, fmt.Sprintf(".part-%d-%s", time.Now().UnixNano(), NewSessionID()))
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		_ = os.Remove(tmp)
		return PDFResult{}, Errorf(CodeDownloadFailed, "cannot write the PDF: %v", err).Wrap(err)
	}
	final, err := PlaceFile(tmp, dir, name)
	if err != nil {
		_ = os.Remove(tmp)
		return PDFResult{}, Errorf(CodeDownloadFailed, "cannot store the PDF: %v", err).Wrap(err)
	}
	sum := sha256.Sum256(data)
	return PDFResult{Path: final, Filename: filepath.Base(final), Size: int64(len(data)), Pages: pages,
		SHA256: hex.EncodeToString(sum[:])}, nil
}

var (
	pagesTypeRe = regexp.MustCompile(`/Type\s*/Pages\b`)
	pageObjRe   = regexp.MustCompile(`/Type\s*/Page\b`)
)

// dictWindow bounds how far around a /Count its dictionary is looked for.
const dictWindow = 4 << 10

// PDFPageCount counts the pages of a PDF: the largest /Count of a /Pages
// node (the root's: an intermediate node counts fewer), or, where none can
// be read (compressed object streams), the /Type /Page objects. Zero when
// it can tell neither. It never fails on input.
func PDFPageCount(data []byte) int {
	best := 0
	key := []byte("/Count")
	for off := 0; ; {
		i := bytes.Index(data[off:], key)
		if i < 0 {
			break
		}
		i += off
		off = i + len(key)
		j := off
		for j < len(data) && (data[j] == ' ' || data[j] == '\n' || data[j] == '\r' || data[j] == '\t') {
			j++
		}
		k := j
		for k < len(data) && k-j < 9 && data[k] >= '0' && data[k] <= '9' {
			k++
		}
		n, err := strconv.Atoi(string(data[j:k]))
		if err != nil || n <= best || (k < len(data) && data[k] >= '0' && data[k] <= '9') {
			continue
		}
		// The dictionary /Count is in: from the "<<" before it to the
		// ">>" after it (nested dictionaries aside: Chrome's are flat).
		lo := bytes.LastIndex(data[max(0, i-dictWindow):i], []byte("<<"))
		hi := bytes.Index(data[k:min(len(data), k+dictWindow)], []byte(">>"))
		if lo < 0 || hi < 0 {
			continue
		}
		if pagesTypeRe.Match(data[max(0, i-dictWindow)+lo : k+hi]) {
			best = n
		}
	}
	if best > 0 {
		return best
	}
	return len(pageObjRe.FindAll(data, -1))
}
