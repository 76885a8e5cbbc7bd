package e2e

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromegate/chromegate/internal/testkit"
)

// TestEveryTestDeclaresBackends holds the matrix to the rule of
// testkit.Backends: the first statement of every test of this package
// declares the backends it runs on, so no test runs on a backend by
// accident, or on none.
func TestEveryTestDeclaresBackends(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	tests := 0
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" {
				continue
			}
			tests++
			if !declaresBackends(fn) {
				t.Errorf("%s: %s does not begin with testkit.Backends(t, ...)", name, fn.Name.Name)
			}
		}
	}
	if tests == 0 {
		t.Fatal("no tests found")
	}
}

// declaresBackends reports whether fn's first statement is a call of
// testkit.Backends.
func declaresBackends(fn *ast.FuncDecl) bool {
	if fn.Body == nil || len(fn.Body.List) == 0 {
		return false
	}
	expr, ok := fn.Body.List[0].(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := expr.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "testkit" && sel.Sel.Name == "Backends"
}
