package citefind_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMakeTestRunsLongTests: `make test` runs every test with -short and
// the race detector, then the tests that skip themselves under -short or
// under the race detector (`if raceEnabled { t.Skip… }`) by name, without
// either (its second go test line, -run 'A|B|…'). A test skipped in the
// first pass whose name that pattern does not match would run nowhere and
// rot unseen; this test fails for each one.
func TestMakeTestRunsLongTests(t *testing.T) {
	mk, err := os.ReadFile("Makefile")
	require.NoError(t, err)
	var pattern string
	inTest := false
	vars := map[string]string{} // NAME := value lines, for $(NAME) in the recipe
	varDef := regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*:?=\s*(.*?)\s*$`)
	for line := range strings.Lines(string(mk)) {
		if m := varDef.FindStringSubmatch(line); m != nil {
			vars[m[1]] = m[2]
		}
		switch {
		case strings.HasPrefix(line, "test:"):
			inTest = true
		case inTest && !strings.HasPrefix(line, "\t"):
			inTest = false
		case inTest && !strings.Contains(line, "-short"):
			line = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`).ReplaceAllStringFunc(line, func(ref string) string {
				if v, ok := vars[ref[2:len(ref)-1]]; ok {
					return v
				}
				return ref
			})
			if m := regexp.MustCompile(`-run '([^']+)'`).FindStringSubmatch(line); m != nil {
				if pattern != "" && pattern != m[1] {
					t.Errorf("the Makefile's test target runs its long tests with two patterns, %q and %q: this test checks one", pattern, m[1])
				}
				pattern = m[1]
			}
		}
	}
	require.NotEmpty(t, pattern, "the Makefile's test target has no go test -run '…' line without -short")
	run := regexp.MustCompile(pattern)

	var long []string
	fset := token.NewFileSet()
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "dist" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Body == nil {
				continue
			}
			if skipsWhen(fn.Body, isShortCall) || skipsWhen(fn.Body, isRaceEnabled) {
				long = append(long, path+": "+fn.Name.Name)
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, long, "found no test that skips under -short: the scan is broken")
	for _, l := range long {
		name := l[strings.LastIndex(l, " ")+1:]
		if !run.MatchString(name) {
			t.Errorf("%s skips under -short or -race and `make test` does not run it by name: add it to the -run pattern of the Makefile's test target (%s)", l, pattern)
		}
	}
}

// skipsWhen reports whether body has an if statement whose condition
// holds an expression cond accepts and whose block calls a Skip method.
func skipsWhen(body *ast.BlockStmt, cond func(ast.Node) bool) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		ifs, ok := n.(*ast.IfStmt)
		if !ok || found {
			return !found
		}
		hit := false
		ast.Inspect(ifs.Cond, func(n ast.Node) bool {
			hit = hit || cond(n)
			return !hit
		})
		if hit && calls(ifs.Body, func(s *ast.SelectorExpr) bool { return strings.HasPrefix(s.Sel.Name, "Skip") }) {
			found = true
		}
		return !found
	})
	return found
}

// isShortCall accepts a call of testing.Short.
func isShortCall(n ast.Node) bool {
	c, ok := n.(*ast.CallExpr)
	if !ok {
		return false
	}
	s, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := s.X.(*ast.Ident)
	return ok && x.Name == "testing" && s.Sel.Name == "Short"
}

// isRaceEnabled accepts the identifier raceEnabled (the packages' constant,
// true in a build with -race).
func isRaceEnabled(n ast.Node) bool {
	id, ok := n.(*ast.Ident)
	return ok && id.Name == "raceEnabled"
}

// calls reports whether n holds a call of a selector that match accepts.
func calls(n ast.Node, match func(*ast.SelectorExpr) bool) bool {
	hit := false
	ast.Inspect(n, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if s, ok := c.Fun.(*ast.SelectorExpr); ok && match(s) {
				hit = true
			}
		}
		return !hit
	})
	return hit
}
