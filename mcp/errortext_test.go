package mcp

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNoErrorTextIsParsed: errors are values to the edge. The text a model
// reads ("CODE: cause", "Next: hint", the fenced page words) is rendered
// once, by errorResult, and no code of the module reads it back: REST and
// the Go client take the structured error, and Retry-After is a field, not
// a number found in a hint.
func TestNoErrorTextIsParsed(t *testing.T) {
	t.Parallel()
	parse := regexp.MustCompile(`(?:Cut|CutPrefix|CutSuffix|Index|LastIndex|Contains|HasPrefix|HasSuffix|TrimPrefix|TrimSuffix|Split|SplitN|MustCompile|Compile)\([^\n]*(?:Next: |retry in )`)
	gone := regexp.MustCompile(`\b(?:parseError|errorOf|retryAfterRE)\b`)
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil // tests read the text: it is what the model sees
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if parse.MatchString(line) || gone.MatchString(line) {
				t.Errorf("%s:%d parses error text: %s", path, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
