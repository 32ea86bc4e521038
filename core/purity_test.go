package core_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/gpusched/gpusched/"

// pureStd is the part of the standard library that pure code may import. io,
// bufio and encoding/csv only carry data from readers and to writers a
// shell passes in.
var pureStd = map[string]bool{
	"bufio": true, "cmp": true, "container/heap": true, "encoding/csv": true, "encoding/json": true, "errors": true,
	"fmt": true, "io": true, "iter": true, "math": true, "math/bits": true, "math/rand/v2": true,
	"maps": true, "slices": true, "sort": true, "strconv": true, "strings": true, "unicode": true, "unicode/utf8": true,
}

// seededRand are the math/rand/v2 names that build seeded generators; every
// other package-level function of it draws from the global source.
var seededRand = map[string]bool{"New": true, "NewPCG": true, "NewChaCha8": true, "NewZipf": true, "Rand": true, "PCG": true, "Source": true}

// alsoPure are packages outside core/ that are pure as well and stay so:
// the simulator itself and the formats it computes (a shell's own pure
// parts). They may import core/ and each other, nothing impure.
var alsoPure = []string{"../sim", "../sim/metrics", "../sim/eventlog"}

// TestCoreIsPure checks every package under core/ (found by walking the
// folder, so none can be forgotten) and the pure packages of the shells:
// their non-test files import only pure standard packages and core/ (for
// alsoPure, also each other) and use no global random source.
func TestCoreIsPure(t *testing.T) {
	dirs := coreDirs(t)
	if len(dirs) < 10 {
		t.Fatalf("found only %d packages under core/: %v", len(dirs), dirs)
	}
	for _, dir := range dirs {
		checkDir(t, dir, func(p string) bool { return strings.HasPrefix(p, module+"core/") })
	}
	for _, dir := range alsoPure {
		checkDir(t, dir, func(p string) bool {
			return strings.HasPrefix(p, module+"core/") || slices.Contains(alsoPure, "../"+strings.TrimPrefix(p, module))
		})
	}
}

// layers says which module folders the code of each shell folder may not
// import: the core sits at the bottom, the simulator never needs the
// service, the Kubernetes shell is the service's peer (neither imports the
// other), and nothing below cli/ imports it.
var layers = map[string][]string{
	"../sim":             {"service", "cli", "kube"},
	"../service":         {"cli", "kube"},
	"../config":          {"sim", "service", "cli", "kube"},
	"../kube":            {"sim", "service", "cli"},
	"../internal/assets": {"core", "sim", "service", "cli", "kube", "config", "internal/testbed"},
}

// testOnly are the module folders that only tests (and scripts/) may
// import: the test beds.
var testOnly = []string{"internal/testbed"}

// runtime are the folders whose non-test code may not import testOnly.
var runtime = []string{"../core", "../sim", "../service", "../cli", "../config", "../kube", "../internal/assets"}

// under reports whether module package path p is folder dir or lies under
// it.
func under(p, dir string) bool {
	rel, ok := strings.CutPrefix(p, module)
	return ok && (rel == dir || strings.HasPrefix(rel, dir+"/"))
}

// TestLayers checks the import rules between the shells' folders (core/'s
// own rule is TestCoreIsPure's).
func TestLayers(t *testing.T) {
	for root, banned := range layers {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				for _, b := range banned {
					if under(p, b) {
						t.Errorf("%s imports %s: code under %s/ may not import %s/", path, p, root[3:], b)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestTestBedsInTestsOnly checks that no runtime code imports a test bed:
// only _test.go files (and scripts/) may.
func TestTestBedsInTestsOnly(t *testing.T) {
	for _, root := range runtime {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				for _, b := range testOnly {
					if under(p, b) {
						t.Errorf("%s imports %s: only tests may import %s/", path, p, b)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestPurityCheckCatches holds the checker itself to account: it must flag
// an impure standard package, a shell package, a third-party module and the
// global random source, and accept a pure file.
func TestPurityCheckCatches(t *testing.T) {
	inCore := func(p string) bool { return strings.HasPrefix(p, module+"core/") }
	for _, tc := range []struct {
		name, src string
		bad       int
	}{
		{"pure", `package x; import ("fmt"; "github.com/gpusched/gpusched/core/model"); var _ = fmt.Sprint; var _ model.Time`, 0},
		{"os", `package x; import "os"; var _ = os.Args`, 1},
		{"time", `package x; import "time"; var _ = time.Now`, 1},
		{"a shell", `package x; import "github.com/gpusched/gpusched/sim"; var _ sim.Config`, 1},
		{"cli and config", `package x; import (_ "github.com/gpusched/gpusched/cli"; _ "github.com/gpusched/gpusched/config")`, 2},
		{"third party", `package x; import "gonum.org/v1/plot"; var _ plot.Plot`, 1},
		{"global rand", `package x; import "math/rand/v2"; var _ = rand.IntN(3)`, 1},
		{"seeded rand", `package x; import r "math/rand/v2"; var _ = r.New(r.NewPCG(1, 2))`, 0},
	} {
		if got := violations("x.go", []byte(tc.src), inCore); len(got) != tc.bad {
			t.Errorf("%s: %d violations %q, want %d", tc.name, len(got), got, tc.bad)
		}
	}
}

// coreDirs returns every folder under core/ that holds Go files.
func coreDirs(t *testing.T) []string {
	var dirs []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || path == "." {
			return err
		}
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if files, _ := filepath.Glob(filepath.Join(path, "*.go")); len(files) > 0 {
			dirs = append(dirs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// checkDir checks the non-test Go files of dir; allowed says which module
// packages they may import.
func checkDir(t *testing.T, dir string, allowed func(string) bool) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range violations(f, src, allowed) {
			t.Error(v)
		}
	}
}

// violations lists what in the file at path, whose text is src, breaks
// the purity rule.
func violations(path string, src []byte, allowed func(string) bool) []string {
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	randName := ""
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if !pureStd[p] && !allowed(p) {
			out = append(out, path+" imports "+strconv.Quote(p)+
				": pure packages may import only pure standard packages and core/ (see core/doc.go)")
		}
		if p == "math/rand/v2" {
			randName = "rand"
			if imp.Name != nil {
				randName = imp.Name.Name
			}
		}
	}
	if randName == "" {
		return out
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, isID := sel.X.(*ast.Ident); isID && id.Name == randName && !seededRand[sel.Sel.Name] {
				out = append(out, path+" uses the global random source ("+randName+"."+sel.Sel.Name+"): pass a seeded generator")
			}
		}
		return true
	})
	return out
}

func TestUnder(t *testing.T) {
	for _, tc := range []struct {
		p, dir string
		want   bool
	}{
		{module + "sim", "sim", true}, {module + "sim/trace", "sim", true}, {module + "simple", "sim", false},
		{module + "service/server", "service", true}, {"example.com/sim", "sim", false},
	} {
		if got := under(tc.p, tc.dir); got != tc.want {
			t.Errorf("under(%q, %q) = %v, want %v", tc.p, tc.dir, got, tc.want)
		}
	}
}
