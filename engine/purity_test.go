package engine_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// corePackages are the packages of the pure core (DESIGN.md): no I/O, no
// clock, no global randomness. Paths are relative to this directory.
var corePackages = []string{"../model", "../engine", "../policy", "../placer", "../profile", "../sim", "../metrics", "../eventlog", "../recipe", "../scaler", "../power", "../network", "../lp"}

// pureStd is the part of the standard library the core may import. io and
// bufio only carry data to writers the shell passes in.
var pureStd = map[string]bool{
	"bufio": true, "cmp": true, "container/heap": true, "encoding/json": true, "errors": true,
	"fmt": true, "io": true, "iter": true, "math": true, "math/bits": true, "math/rand/v2": true,
	"maps": true, "slices": true, "sort": true, "strconv": true, "strings": true, "unicode/utf8": true,
}

// seededRand are the math/rand/v2 names that build seeded generators; every
// other package-level function of it draws from the global source.
var seededRand = map[string]bool{"New": true, "NewPCG": true, "NewChaCha8": true, "NewZipf": true, "Rand": true, "PCG": true, "Source": true}

func TestCoreIsPure(t *testing.T) {
	const module = "github.com/gpusched/gpusched/"
	core := map[string]bool{}
	for _, p := range corePackages {
		core[module+filepath.Base(p)] = true
	}
	for _, dir := range corePackages {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			checkFile(t, f, core)
		}
	}
}

func checkFile(t *testing.T, path string, core map[string]bool) {
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	randName := ""
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if !pureStd[p] && !core[p] {
			t.Errorf("%s imports %q: core packages may import only pure standard packages and other core packages", path, p)
		}
		if p == "math/rand/v2" {
			randName = "rand"
			if imp.Name != nil {
				randName = imp.Name.Name
			}
		}
	}
	if randName == "" {
		return
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, isID := sel.X.(*ast.Ident); isID && id.Name == randName && !seededRand[sel.Sel.Name] {
			t.Errorf("%s uses the global random source (%s.%s): pass a seeded generator", path, randName, sel.Sel.Name)
		}
		return true
	})
}
