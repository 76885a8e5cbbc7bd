package executor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// onePDF is a minimal PDF of n pages in one /Pages node.
func onePDF(n int) []byte {
	var b strings.Builder
	b.WriteString("%PDF-1.4\n1 0 obj\n<</Type /Catalog /Pages 2 0 R>>\nendobj\n2 0 obj\n<</Type /Pages /Count ")
	b.WriteString(itoa(n))
	b.WriteString(" /Kids [")
	for i := range n {
		b.WriteString(itoa(3+i) + " 0 R ")
	}
	b.WriteString("]>>\nendobj\n")
	for i := range n {
		b.WriteString(itoa(3+i) + " 0 obj\n<</Type /Page /Parent 2 0 R>>\nendobj\n")
	}
	b.WriteString("%%EOF\n")
	return []byte(b.String())
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func TestPDFPageCount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		pdf  string
		want int
	}{
		{"one node", string(onePDF(3)), 3},
		{"count before type", "%PDF-1.7\n<</Count 12 /Kids [] /Type /Pages>>", 12},
		// A tree: the root counts every page, an intermediate node fewer.
		{"tree", "%PDF-1.7\n<</Type /Pages /Count 5 /Kids [2 0 R 3 0 R]>> <</Type /Pages /Parent 1 0 R /Count 2>> <</Type /Pages /Count 3>>", 5},
		// Object streams hide the /Pages node: the /Page objects are counted.
		{"pages only", "%PDF-1.7\n<</Type/Page>> <</Type /Page /X 1>> <</Type /Pages>>", 2},
		{"no pages", "%PDF-1.7\n", 0},
		{"garbage count", "%PDF-1.7\n<</Type /Pages /Count 99999999999999999999>>", 0},
	}
	for _, tt := range tests {
		if got := PDFPageCount([]byte(tt.pdf)); got != tt.want {
			t.Errorf("%s: %d pages, want %d", tt.name, got, tt.want)
		}
	}
}

func FuzzPDFPageCount(f *testing.F) {
	f.Add(onePDF(2))
	f.Add([]byte("%PDF-1.7\n<</Type /Pages /Count 5>>"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if n := PDFPageCount(b); n < 0 || n >= 1<<24 {
			t.Fatalf("%d pages", n)
		}
	})
}

func TestSavePDF(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := onePDF(2)
	r, err := SavePDF(dir, "../../etc/report", data, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if r.Filename != "report.pdf" || filepath.Dir(r.Path) != dir || r.Pages != 2 || r.Size != int64(len(data)) || len(r.SHA256) != 64 {
		t.Fatalf("saved %+v", r)
	}
	// The same name again is a new file, never the old one replaced.
	r2, err := SavePDF(dir, "report.pdf", data, 1<<20)
	if err != nil || r2.Filename != "report (1).pdf" {
		t.Fatalf("second save %+v %v", r2, err)
	}
	// Over the cap, or not a PDF: an error and nothing left behind.
	if _, err := SavePDF(dir, "big", data, 10); CodeOf(err) != CodeDownloadFailed || !strings.Contains(err.Error(), "limit of 10 bytes") {
		t.Fatalf("over the cap: %v", err)
	}
	if _, err := SavePDF(dir, "html", []byte("<html>"), 1<<20); err == nil {
		t.Fatal("a non-PDF was saved")
	}
	files, _ := os.ReadDir(dir)
	if len(files) != 2 {
		t.Fatalf("the directory holds %d files, want the two PDFs", len(files))
	}
	if st, _ := os.Stat(r.Path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
}

func TestPrintParams(t *testing.T) {
	t.Parallel()
	m, err := PDFParams{Format: "a4", Landscape: true, Ranges: "1 - 2, 5"}.PrintParams()
	if err != nil || m["paperWidth"] != 8.27 || m["landscape"] != true || m["pageRanges"] != "1-2,5" || m["scale"] != 1.0 {
		t.Fatalf("%v %v", m, err)
	}
	for _, p := range []PDFParams{{Format: "B5"}, {Scale: 3}, {Scale: 0.05}, {Ranges: "1;2"}, {Ranges: "-1"}} {
		if _, err := p.PrintParams(); CodeOf(err) != CodeBadArgs {
			t.Errorf("%+v: %v, want BAD_ARGS", p, err)
		}
	}
	if (PDFParams{}).Limit() != MaxPDFBytes || (PDFParams{MaxBytes: 5}).Limit() != 5 || (PDFParams{MaxBytes: MaxPDFBytes + 1}).Limit() != MaxPDFBytes {
		t.Error("Limit")
	}
}

// BenchmarkPDFPageCount counts the pages of a 300-page PDF.
func BenchmarkPDFPageCount(b *testing.B) {
	data := onePDF(300)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if PDFPageCount(data) != 300 {
			b.Fatal("count")
		}
	}
}
