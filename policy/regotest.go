package policy

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/cover"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/tester"

	"github.com/chromegate/chromegate/policies"
)

// TestTimeout bounds each Rego test. It catches a test that never ends, not a
// slow one: a table test over every tool with coverage on, under -race on a
// busy two-core machine, has taken over 6 s.
const TestTimeout = 60 * time.Second

// Test runs the Rego unit tests (rules named test_*) of the policies in
// dirs, loaded together as `opa test dir...` would, with chromegate's
// builtins and capabilities; with no dirs, those of the embedded default
// policy. It prints one line per test and a summary to w, and, with
// coverage, the share of policy lines (tests excluded) the tests run. It
// returns the number of tests that passed and failed; err is for policies
// that do not load or compile.
//
// This is the supported runner: plain `opa test` does not know
// chromegate.host_match or chromegate.parse_url.
func Test(ctx context.Context, dirs []string, w io.Writer, coverage bool) (passed, failed int, err error) {
	var srcs []source
	for _, d := range dirs {
		srcs = append(srcs, dirSource(d))
	}
	if len(srcs) == 0 {
		srcs = []source{{name: DefaultSource, fsys: policies.Default}}
	}
	return runTests(ctx, srcs, w, coverage)
}

// TestFS is Test for a policy in a file system (policies.Default, one of
// policies.Examples), named name in the output.
func TestFS(ctx context.Context, name string, fsys fs.FS, w io.Writer, coverage bool) (passed, failed int, err error) {
	return runTests(ctx, []source{{name: name, fsys: fsys}}, w, coverage)
}

func runTests(ctx context.Context, srcs []source, w io.Writer, coverage bool) (passed, failed int, err error) {
	modules := map[string]*ast.Module{}
	data := map[string]any{}
	for _, src := range srcs {
		m, d, err := loadSource(src, true)
		if err != nil {
			return 0, 0, err
		}
		for k, v := range m {
			modules[k] = v
		}
		if err := mergeStrict(data, d, ""); err != nil {
			return 0, 0, &LoadError{Source: src.name, Problems: []Problem{{Message: err.Error()}}}
		}
	}
	store := inmem.NewFromObjectWithOpts(data, inmem.OptRoundTripOnWrite(false))
	txn, err := store.NewTransaction(ctx, storage.TransactionParams{})
	if err != nil {
		return 0, 0, err
	}
	defer store.Abort(ctx, txn)

	var custom []*tester.Builtin
	for _, f := range []struct {
		decl *ast.Builtin
		opt  int
	}{{astBuiltin(hostMatchDecl), 0}, {astBuiltin(parseURLDecl), 1}} {
		custom = append(custom, &tester.Builtin{Decl: f.decl, Func: regoFunctions()[f.opt]})
	}
	compiler := ast.NewCompiler().
		WithCapabilities(capabilities()).
		WithEnablePrintStatements(true)
	runner := tester.NewRunner().
		SetCompiler(compiler).
		SetStore(store).
		SetModules(modules).
		AddCustomBuiltins(custom).
		RaiseBuiltinErrors(true).
		CapturePrintOutput(true).
		SetTimeout(TestTimeout)
	var cov *cover.Cover
	if coverage {
		cov = cover.New()
		runner = runner.SetCoverageQueryTracer(cov)
	}
	ch, err := runner.RunTests(ctx, txn)
	if err != nil {
		name := ""
		if len(srcs) == 1 {
			name = srcs[0].name
		}
		return 0, 0, &LoadError{Source: name, Problems: problemsOf(err, "")}
	}
	var results []*tester.Result
	for r := range ch {
		results = append(results, r)
	}
	sort.SliceStable(results, func(i, j int) bool {
		a, b := results[i].Location, results[j].Location
		if a == nil || b == nil || a.File != b.File {
			return a != nil && b != nil && a.File < b.File
		}
		return a.Row < b.Row
	})
	for _, r := range results {
		where := ""
		if r.Location != nil {
			where = fmt.Sprintf("%s:%d: ", r.Location.File, r.Location.Row)
		}
		switch {
		case r.Skip:
			fmt.Fprintf(w, "SKIP  %s%s.%s\n", where, r.Package, r.Name)
		case r.Pass():
			passed++
			fmt.Fprintf(w, "PASS  %s%s.%s (%v)\n", where, r.Package, r.Name, r.Duration.Round(time.Microsecond))
		default:
			failed++
			fmt.Fprintf(w, "FAIL  %s%s.%s (%v)\n", where, r.Package, r.Name, r.Duration.Round(time.Microsecond))
			if r.Error != nil {
				fmt.Fprintf(w, "      error: %v\n", r.Error)
			}
			if len(r.Output) > 0 {
				fmt.Fprintf(w, "      output: %s\n", r.Output)
			}
		}
	}
	fmt.Fprintf(w, "%d passed, %d failed\n", passed, failed)
	if cov != nil {
		policyModules := map[string]*ast.Module{}
		for name, m := range modules {
			if !isTestFile(name) {
				policyModules[name] = m
			}
		}
		rep := cov.Report(policyModules)
		files := make([]string, 0, len(rep.Files))
		covered, total := 0, 0
		for f, fr := range rep.Files {
			if isTestFile(f) {
				continue
			}
			files = append(files, f)
			covered += fr.CoveredLines
			total += fr.CoveredLines + fr.NotCoveredLines
		}
		pct := 100.0
		if total > 0 {
			pct = 100 * float64(covered) / float64(total)
		}
		fmt.Fprintf(w, "coverage: %.1f%% (%d of %d lines of policy)\n", pct, covered, total)
		sort.Strings(files)
		for _, f := range files {
			fr := rep.Files[f]
			if len(fr.NotCovered) == 0 {
				continue
			}
			fmt.Fprintf(w, "  %s: not covered:", f)
			last := ""
			for _, rg := range fr.NotCovered {
				r := fmt.Sprint(rg.Start.Row)
				if rg.Start.Row != rg.End.Row {
					r += fmt.Sprintf("-%d", rg.End.Row)
				}
				if r != last {
					fmt.Fprint(w, " "+r)
				}
				last = r
			}
			fmt.Fprintln(w)
		}
	}
	return passed, failed, nil
}
