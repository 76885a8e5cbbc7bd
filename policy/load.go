package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/util"
)

// source is where a policy comes from: a directory on disk, or a file
// system embedded in the binary.
type source struct {
	// name is shown in Status and prefixes file names in errors: the
	// directory, or "policies/default" for the embedded default.
	name string
	fsys fs.FS
}

func dirSource(dir string) source {
	return source{name: filepath.Clean(dir), fsys: os.DirFS(dir)}
}

// Problem is one thing wrong with a policy, where it is.
type Problem struct {
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	switch {
	case p.File != "" && p.Line > 0:
		return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Col, p.Message)
	case p.File != "":
		return p.File + ": " + p.Message
	}
	return p.Message
}

// LoadError is a policy that could not be loaded, with every problem found
// and its file:line.
type LoadError struct {
	Source   string
	Problems []Problem
}

func (e *LoadError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "policy %s", e.Source)
	for i, p := range e.Problems {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// isDataFile: as in OPA bundles, only data.json and data.yaml files are
// data; any other JSON (a schema, an input for `policy eval`) is ignored.
func isDataFile(name string) bool {
	switch path.Base(name) {
	case "data.json", "data.yaml", "data.yml":
		return true
	}
	return false
}

func isTestFile(name string) bool { return strings.HasSuffix(name, "_test.rego") }

// walkPolicy lists the policy files of a source in a stable order: .rego
// files (without tests unless asked) and data files, skipping hidden files
// and directories.
func walkPolicy(src source, tests bool) ([]string, error) {
	var files []string
	err := fs.WalkDir(src.fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		switch {
		case strings.HasSuffix(p, ".rego"):
			if tests || !isTestFile(p) {
				files = append(files, p)
			}
		case isDataFile(p):
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// loadSource parses a source's modules and assembles its data: each data
// file sits under data at its directory's path, as in OPA.
func loadSource(src source, tests bool) (map[string]*ast.Module, map[string]any, error) {
	files, err := walkPolicy(src, tests)
	if err != nil {
		return nil, nil, &LoadError{Source: src.name, Problems: []Problem{{Message: err.Error()}}}
	}
	modules := map[string]*ast.Module{}
	data := map[string]any{}
	var problems []Problem
	popts := ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true, Capabilities: capabilities()}
	for _, p := range files {
		name := path.Join(filepath.ToSlash(src.name), p)
		b, err := fs.ReadFile(src.fsys, p)
		if err != nil {
			problems = append(problems, Problem{File: name, Message: err.Error()})
			continue
		}
		if strings.HasSuffix(p, ".rego") {
			m, err := ast.ParseModuleWithOpts(name, string(b), popts)
			if err != nil {
				problems = append(problems, problemsOf(err, name)...)
				continue
			}
			if m == nil {
				problems = append(problems, Problem{File: name, Message: "empty module"})
				continue
			}
			modules[name] = m
			continue
		}
		var doc any
		if strings.HasSuffix(p, ".json") {
			err = util.UnmarshalJSON(b, &doc)
		} else {
			err = util.Unmarshal(b, &doc)
		}
		if err != nil {
			problems = append(problems, Problem{File: name, Message: "invalid data: " + err.Error()})
			continue
		}
		obj, ok := doc.(map[string]any)
		if !ok {
			problems = append(problems, Problem{File: name, Message: "data must be a JSON object"})
			continue
		}
		dir := path.Dir(p)
		var at []string
		if dir != "." {
			at = strings.Split(dir, "/")
		}
		if err := placeData(data, at, obj); err != nil {
			problems = append(problems, Problem{File: name, Message: err.Error()})
		}
	}
	if len(problems) == 0 && len(modules) == 0 {
		problems = append(problems, Problem{Message: "no .rego files"})
	}
	if len(problems) > 0 {
		return nil, nil, &LoadError{Source: src.name, Problems: problems}
	}
	return modules, data, nil
}

// placeData puts obj into data at path, refusing to overwrite a value
// another data file set (OPA's merge rule for data files).
func placeData(data map[string]any, at []string, obj map[string]any) error {
	node := data
	for _, k := range at {
		next, ok := node[k]
		if !ok {
			m := map[string]any{}
			node[k] = m
			node = m
			continue
		}
		m, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("data.%s is set by another data file", strings.Join(at, "."))
		}
		node = m
	}
	return mergeStrict(node, obj, strings.Join(at, "."))
}

func mergeStrict(dst, src map[string]any, at string) error {
	for k, v := range src {
		where := k
		if at != "" {
			where = at + "." + k
		}
		old, ok := dst[k]
		if !ok {
			dst[k] = v
			continue
		}
		om, ok1 := old.(map[string]any)
		nm, ok2 := v.(map[string]any)
		if !ok1 || !ok2 {
			return fmt.Errorf("data.%s is set by more than one data file", where)
		}
		if err := mergeStrict(om, nm, where); err != nil {
			return err
		}
	}
	return nil
}

// mergeOver lays overlay data (a --data file, then the flags) over the
// policy's own data: objects merge key by key, arrays are joined (without
// duplicates, so --allow-domain adds to the policy's allow_domains), and
// any other value replaces what was there.
func mergeOver(dst, src map[string]any) {
	for k, v := range src {
		old, ok := dst[k]
		if !ok {
			dst[k] = v
			continue
		}
		switch nv := v.(type) {
		case map[string]any:
			if om, ok := old.(map[string]any); ok {
				mergeOver(om, nv)
				continue
			}
		case []any:
			if oa, ok := old.([]any); ok {
				dst[k] = union(oa, nv)
				continue
			}
		}
		dst[k] = v
	}
}

func union(a, b []any) []any {
	out := append([]any(nil), a...)
	seen := map[string]bool{}
	for _, x := range a {
		seen[jsonKey(x)] = true
	}
	for _, x := range b {
		if k := jsonKey(x); !seen[k] {
			seen[k] = true
			out = append(out, x)
		}
	}
	return out
}

func jsonKey(x any) string {
	b, _ := json.Marshal(x)
	return string(b)
}

// jsonData converts Go data (flags: []string, bool) to the JSON-shaped
// values the store holds.
func jsonData(m map[string]any) (map[string]any, error) {
	if m == nil {
		return map[string]any{}, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("policy data: %w", err)
	}
	var out map[string]any
	if err := util.UnmarshalJSON(b, &out); err != nil {
		return nil, fmt.Errorf("policy data: %w", err)
	}
	return out, nil
}

// readDataFile reads a --data file: a JSON or YAML object laid over data.
func readDataFile(p string) (map[string]any, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, &LoadError{Source: p, Problems: []Problem{{Message: err.Error()}}}
	}
	var doc any
	if strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") {
		err = util.Unmarshal(b, &doc)
	} else {
		err = util.UnmarshalJSON(bytes.TrimSpace(b), &doc)
	}
	if err != nil {
		return nil, &LoadError{Source: p, Problems: []Problem{{File: p, Message: "invalid data: " + err.Error()}}}
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, &LoadError{Source: p, Problems: []Problem{{File: p, Message: "data must be a JSON object"}}}
	}
	return obj, nil
}

var undefinedFunction = regexp.MustCompile(`undefined function ([A-Za-z0-9_.]+)`)

// problemsOf turns OPA's errors into Problems, explaining removed builtins.
func problemsOf(err error, file string) []Problem {
	var errs ast.Errors
	if errors.As(err, &errs) {
		out := make([]Problem, 0, len(errs))
		for _, e := range errs {
			out = append(out, problemOf(e, file))
		}
		return out
	}
	var one *ast.Error
	if errors.As(err, &one) {
		return []Problem{problemOf(one, file)}
	}
	return []Problem{{File: file, Message: explainBuiltin(err.Error())}}
}

func problemOf(e *ast.Error, file string) Problem {
	p := Problem{File: file, Message: explainBuiltin(e.Message)}
	if e.Location != nil {
		if e.Location.File != "" {
			p.File = e.Location.File
		}
		p.Line, p.Col = e.Location.Row, e.Location.Col
	}
	return p
}

func explainBuiltin(msg string) string {
	if m := undefinedFunction.FindStringSubmatch(msg); m != nil {
		if why, ok := RemovedBuiltins[m[1]]; ok {
			return fmt.Sprintf("builtin %s is not available in chromegate policies: %s", m[1], why)
		}
	}
	return msg
}
