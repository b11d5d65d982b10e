package deltavacuum_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// vacuumImport is the import path of package vacuum, the one owner of the rules that decide
// what VACUUM deletes.
const vacuumImport = "github.com/deltavacuum/deltavacuum/vacuum"

// deciderExempt are the folders whose code may do what outsideDecisions looks for: vacuum owns
// the rules; deltalog reads the log (it reconciles removes by their times); the storage
// backends know objects, not Delta; the benchmarks and the test-only log writer build logs
// and plans to measure them.
var deciderExempt = []string{"vacuum", "deltalog", "storage", "bench", "internal/checkpointwriter", "cmd/dvbench"}

// planTypes are the types of package vacuum that make a plan or a verdict.
var planTypes = map[string]bool{"Plan": true, "File": true, "Dir": true, "FileList": true, "Verdict": true}

// fileTimes are the fields that hold when a file was removed or last modified: the times the
// tombstone and age rules compare with the cutoff.
var fileTimes = map[string]bool{"DeletionTimestamp": true, "NewestRemoval": true, "ModTime": true, "ModificationTime": true}

// TestNoDeletionRulesOutsideVacuum: no package but vacuum decides whether a file is deletable
// (docs/architecture.md). In the Go files of every other package (tests and the exempt folders
// aside) it looks for what such a decision is made of:
//
//   - a plan or a verdict made there: a composite literal of vacuum.Plan, File, Dir, FileList
//     or Verdict with fields or elements, new() of one, a call of vacuum.NewFileList, or of
//     Append on the Files of a plan;
//   - a time of a file (DeletionTimestamp, NewestRemoval, ModTime, ModificationTime) compared
//     with anything but a constant or another such time: an ordered comparison, or Before,
//     After, Compare, min, max, cmp.Compare or cmp.Less with one as an operand.
//
// The check reads the syntax, not the types: a time copied to a variable of another name
// first is not seen. It states what can be stated reliably; the rest is review, and TestRules.
func TestNoDeletionRulesOutsideVacuum(t *testing.T) {
	fset := token.NewFileSet()
	var found []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		slash := filepath.ToSlash(path)
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "python") {
				return filepath.SkipDir
			}
			for _, ex := range deciderExempt {
				if slash == ex {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		found = append(found, outsideDecisions(fset, f)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Error(f)
	}
}

// outsideDecisions returns what in f makes a plan or a verdict, or compares the time of a file.
func outsideDecisions(fset *token.FileSet, f *ast.File) []string {
	vac := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == vacuumImport {
			vac = "vacuum"
			if imp.Name != nil {
				vac = imp.Name.Name
			}
		}
	}
	var out []string
	report := func(n ast.Node, what string) {
		out = append(out, fset.Position(n.Pos()).String()+": "+what)
	}
	isPlanType := func(e ast.Expr) bool {
		for {
			switch x := e.(type) {
			case *ast.StarExpr:
				e = x.X
			case *ast.ArrayType:
				e = x.Elt
			case *ast.MapType:
				e = x.Value
			case *ast.SelectorExpr:
				id, ok := x.X.(*ast.Ident)
				return ok && vac != "" && id.Name == vac && planTypes[x.Sel.Name]
			default:
				return false
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CompositeLit:
			if len(x.Elts) > 0 && x.Type != nil && isPlanType(x.Type) {
				report(x, "a plan or a verdict made outside package vacuum")
			}
		case *ast.BinaryExpr:
			switch x.Op {
			case token.LSS, token.LEQ, token.GTR, token.GEQ:
				if comparesFileTime(x.X, x.Y) {
					report(x, "the time of a file compared outside package vacuum")
				}
			}
		case *ast.CallExpr:
			switch fn := x.Fun.(type) {
			case *ast.Ident:
				switch fn.Name {
				case "new":
					if len(x.Args) == 1 && isPlanType(x.Args[0]) {
						report(x, "a plan or a verdict made outside package vacuum")
					}
				case "min", "max":
					if comparesFileTime(x.Args...) {
						report(x, "the time of a file compared outside package vacuum")
					}
				}
			case *ast.SelectorExpr:
				if id, ok := fn.X.(*ast.Ident); ok && vac != "" && id.Name == vac && fn.Sel.Name == "NewFileList" {
					report(x, "a plan's list of files made outside package vacuum")
				}
				if files, ok := fn.X.(*ast.SelectorExpr); ok && files.Sel.Name == "Files" && fn.Sel.Name == "Append" {
					report(x, "a file appended to a plan outside package vacuum")
				}
				switch fn.Sel.Name {
				case "Before", "After", "Compare":
					if len(x.Args) == 1 && comparesFileTime(fn.X, x.Args[0]) {
						report(x, "the time of a file compared outside package vacuum")
					}
				case "Less":
					if id, ok := fn.X.(*ast.Ident); ok && id.Name == "cmp" && comparesFileTime(x.Args...) {
						report(x, "the time of a file compared outside package vacuum")
					}
				}
				if id, ok := fn.X.(*ast.Ident); ok && id.Name == "cmp" && fn.Sel.Name == "Compare" && comparesFileTime(x.Args...) {
					report(x, "the time of a file compared outside package vacuum")
				}
			}
		}
		return true
	})
	return out
}

// comparesFileTime reports whether the operands compare the time of a file with something that
// is neither a constant nor the time of a file.
func comparesFileTime(operands ...ast.Expr) bool {
	times, others := 0, 0
	for _, e := range operands {
		switch {
		case mentionsFileTime(e):
			times++
		case !isConstant(e):
			others++
		}
	}
	return times > 0 && others > 0
}

func mentionsFileTime(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			found = found || fileTimes[x.Sel.Name]
		case *ast.Ident:
			found = found || fileTimes[x.Name]
		}
		return !found
	})
	return found
}

func isConstant(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.BasicLit:
		return true
	case *ast.UnaryExpr:
		return isConstant(x.X)
	case *ast.ParenExpr:
		return isConstant(x.X)
	}
	return false
}
