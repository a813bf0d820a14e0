package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// maxFuncLines bounds a function of production code (issue 15): a longer one
// is several steps that want names of their own.
const maxFuncLines = 60

// TestFunctionLength fails on any function of production code over
// maxFuncLines lines, tests and generated code aside.
func TestFunctionLength(t *testing.T) {
	root := moduleRoot(t)
	checked := 0
	walkGo(t, root, func(path string, f *ast.File, fset *token.FileSet) {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			checked++
			lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if lines > maxFuncLines {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s: %s is %d lines, want at most %d", rel, funcName(fn), lines, maxFuncLines)
			}
		}
	})
	if checked < 500 {
		t.Fatalf("checked %d functions; want the whole module", checked)
	}
}

// sqlRE finds SQL statements in Go strings (ours are upper case).
var sqlRE = regexp.MustCompile(`(?s)\b(SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX))\b`)

// TestNoSQLInCmd keeps the commands wiring only: whoever owns a table owns
// its SQL, so no string literal under cmd/ledger holds a statement.
func TestNoSQLInCmd(t *testing.T) {
	root := moduleRoot(t)
	walkGo(t, filepath.Join(root, "cmd", "ledger"), func(path string, f *ast.File, fset *token.FileSet) {
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && sqlRE.MatchString(lit.Value) {
				pos := fset.Position(lit.Pos())
				rel, _ := filepath.Rel(root, pos.Filename)
				t.Errorf("%s:%d: SQL in cmd/ledger: %.60s", rel, pos.Line, lit.Value)
			}
			return true
		})
	})
}

// walkGo parses every non-test, non-generated Go file under dir.
func walkGo(t *testing.T, dir string, visit func(string, *ast.File, *token.FileSet)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != dir {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return fmt.Errorf("parse: %w", err)
		}
		if !ast.IsGenerated(f) {
			visit(path, f, fset)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if idx, ok := typ.(*ast.IndexExpr); ok {
		typ = idx.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}
