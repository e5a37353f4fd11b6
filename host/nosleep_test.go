package host_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNoRealSleeps: no host test waits in real time. A time.Sleep call in
// the package's test files must be lexically inside a synctest.Test
// callback (where it advances the bubble's fake clock), inside a
// benchmark (which paces real load), or inside a helper function that is
// itself only referred to from such places.
func TestNoRealSleeps(t *testing.T) {
	names, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) < 10 {
		t.Fatalf("only %d test files found: %v", len(files), names)
	}
	for _, pos := range realSleeps(files) {
		t.Errorf("%s: time.Sleep outside a synctest bubble", fset.Position(pos))
	}
}

// TestRealSleepsFound checks the check itself.
func TestRealSleepsFound(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		bad  int
	}{
		{"in a test", `func TestA(t *testing.T) { time.Sleep(1) }`, 1},
		{"in a bubble", `func TestA(t *testing.T) { synctest.Test(t, func(t *testing.T) { time.Sleep(1) }) }`, 0},
		{"in a subtest's bubble", `func TestA(t *testing.T) { t.Run("x", func(t *testing.T) { synctest.Test(t, func(t *testing.T) { for { time.Sleep(1) } }) }) }`, 0},
		{"beside a bubble", `func TestA(t *testing.T) { synctest.Test(t, func(t *testing.T) {}); time.Sleep(1) }`, 1},
		{"in a benchmark", `func BenchmarkA(b *testing.B) { go func() { time.Sleep(1) }() }`, 0},
		{"helper called in a bubble", `func wait() { time.Sleep(1) }
			func TestA(t *testing.T) { synctest.Test(t, func(t *testing.T) { wait() }) }`, 0},
		{"helper called outside", `func wait() { time.Sleep(1) }
			func TestA(t *testing.T) { synctest.Test(t, func(t *testing.T) { wait() }); wait() }`, 1},
		{"helper never called", `func wait() { time.Sleep(1) }`, 1},
		{"method through a helper", `type r struct{}
			func (r) read() { time.Sleep(1) }
			func burst(x r) { x.read() }
			func TestA(t *testing.T) { synctest.Test(t, func(t *testing.T) { burst(r{}) }) }`, 0},
		{"helpers calling each other", `func a() { b(); time.Sleep(1) }
			func b() { a() }`, 1},
		{"other sleeps", `func TestA(t *testing.T) { clock.Sleep(1); Sleep(1) }`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x_test.go", "package x\n"+tc.src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if got := realSleeps([]*ast.File{f}); len(got) != tc.bad {
				t.Errorf("%d real sleeps found, want %d", len(got), tc.bad)
			}
		})
	}
}

// realSleeps returns the positions of the time.Sleep calls in files that
// may run outside a synctest bubble. Uses are matched by name (a method's
// by selector, a function's by plain identifier), so a name that is also
// something else's only makes the check stricter.
func realSleeps(files []*ast.File) []token.Pos {
	var (
		bubbles, benches []span
		helpers          []*ast.FuncDecl
		sleeps           []token.Pos
		funcRefs         = map[string][]token.Pos{} // plain identifiers
		methodRefs       = map[string][]token.Pos{} // selectors' names
		selected         = map[token.Pos]bool{}
	)
	isCall := func(e ast.Expr, pkg, name string) bool {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != name {
			return false
		}
		x, ok := sel.X.(*ast.Ident)
		return ok && x.Name == pkg
	}
	visit := func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if isCall(n.Fun, "time", "Sleep") {
				sleeps = append(sleeps, n.Pos())
			}
			if isCall(n.Fun, "synctest", "Test") {
				for _, a := range n.Args {
					if fl, ok := a.(*ast.FuncLit); ok {
						bubbles = append(bubbles, span{fl.Pos(), fl.End()})
					}
				}
			}
		case *ast.SelectorExpr:
			methodRefs[n.Sel.Name] = append(methodRefs[n.Sel.Name], n.Sel.Pos())
			selected[n.Sel.Pos()] = true
		case *ast.Ident:
			if !selected[n.Pos()] {
				funcRefs[n.Name] = append(funcRefs[n.Name], n.Pos())
			}
		}
		return true
	}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				ast.Inspect(d, visit)
				continue
			}
			switch name := fd.Name.Name; {
			case strings.HasPrefix(name, "Benchmark"):
				benches = append(benches, span{fd.Pos(), fd.End()})
			case !strings.HasPrefix(name, "Test"):
				helpers = append(helpers, fd)
			}
			// The body only: the declared name is no use of it.
			if fd.Body != nil {
				ast.Inspect(fd.Body, visit)
			}
		}
	}
	within := func(spans []span, p token.Pos) bool {
		return slices.ContainsFunc(spans, func(s span) bool { return s.from <= p && p < s.to })
	}
	// bubbleOnly reports whether every use of a helper is in a bubble, a
	// benchmark or another such helper; a helper that is never used, or
	// that may reach itself, is not.
	memo := map[*ast.FuncDecl]bool{}
	visiting := map[*ast.FuncDecl]bool{}
	var allowed func(p token.Pos) bool
	bubbleOnly := func(fd *ast.FuncDecl) bool {
		if v, ok := memo[fd]; ok {
			return v
		}
		if visiting[fd] {
			return false
		}
		visiting[fd] = true
		refs := funcRefs[fd.Name.Name]
		if fd.Recv != nil {
			refs = methodRefs[fd.Name.Name]
		}
		ok := len(refs) > 0
		for _, p := range refs {
			ok = ok && allowed(p)
		}
		visiting[fd] = false
		memo[fd] = ok
		return ok
	}
	allowed = func(p token.Pos) bool {
		if within(bubbles, p) || within(benches, p) {
			return true
		}
		for _, fd := range helpers {
			if fd.Pos() <= p && p < fd.End() && bubbleOnly(fd) {
				return true
			}
		}
		return false
	}
	var bad []token.Pos
	for _, p := range sleeps {
		if !allowed(p) {
			bad = append(bad, p)
		}
	}
	return bad
}

// span is the extent of a function.
type span struct{ from, to token.Pos }
