package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/cli"
)

// calibrateRun runs `gpusched calibrate args...` in-process.
func calibrateRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = cli.Execute(append([]string{"calibrate"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// writeTemp writes content to a file in a temporary directory.
func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// rampCSV is a synthetic ramp of n samples with 1 % power noise whose energy
// per unit of work falls until th1, is flat until th2 and rises after it.
func rampCSV(typ string, th1, th2 float64, n int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	for k := 1; k <= n; k++ {
		l := float64(k) / float64(n)
		e := 1.0
		switch {
		case l < th1:
			e += 2 * (th1 - l) * (th1 - l) / (th1 * th1)
		case l > th2:
			e += (l - th2) * (l - th2) / ((1 - th2) * (1 - th2))
		}
		tp := 1000 * l
		fmt.Fprintf(&b, "%s,%.4f,%.3f,%.1f\n", typ, l, 0.3*e*tp*(1+0.01*rng.NormFloat64()), tp)
	}
	return b.String()
}

func TestCalibrateJSON(t *testing.T) {
	file := writeTemp(t, "ramp.csv", "type,load,power_w,throughput\n"+
		rampCSV("resnet", 0.3, 0.75, 150, 1)+rampCSV("bert", 0.2, 0.6, 150, 2))
	code, out, errs := calibrateRun(t, "--samples", file, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got map[string]struct{ Th1, Th2 *float64 }
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	want := map[string][2]float64{"resnet": {0.3, 0.75}, "bert": {0.2, 0.6}}
	if len(got) != len(want) {
		t.Fatalf("types %v, want %v", got, want)
	}
	for typ, w := range want {
		g := got[typ]
		if g.Th1 == nil || g.Th2 == nil {
			t.Fatalf("%s: missing th1 or th2 in %s", typ, out)
		}
		if math.Abs(*g.Th1-w[0]) > 0.05 || math.Abs(*g.Th2-w[1]) > 0.05 {
			t.Errorf("%s: th1 %v, th2 %v; want %v, %v ± 0.05", typ, *g.Th1, *g.Th2, w[0], w[1])
		}
	}
}

func TestCalibrateTable(t *testing.T) {
	code, out, errs := calibrateRun(t, "--samples", "../testdata/calibrate/ramp.csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || strings.Fields(lines[0])[0] != "TYPE" {
		t.Fatalf("want a header and two types:\n%s", out)
	}
	// The file's curves: bert 0.25, 0.70; resnet 0.30, 0.80 (sorted by type).
	for i, want := range [][3]string{{"bert", "0.25", "0.70"}, {"resnet", "0.30", "0.80"}} {
		f := strings.Fields(lines[i+1])
		if len(f) != 3 || f[0] != want[0] {
			t.Fatalf("line %q, want type %s", lines[i+1], want[0])
		}
		for j := 1; j <= 2; j++ {
			var got, w float64
			fmt.Sscan(f[j], &got)
			fmt.Sscan(want[j], &w)
			if math.Abs(got-w) > 0.05 {
				t.Errorf("%s: th%d %v, want %v ± 0.05", want[0], j, got, w)
			}
		}
	}
}

func TestCalibrateBadInput(t *testing.T) {
	const h = "load,power_w,throughput\n"
	good := strings.ReplaceAll(rampCSV("x", 0.3, 0.75, 40, 3), "x,", "")
	lines := strings.SplitAfter(good, "\n")
	vShape := ""
	for k := 1; k <= 50; k++ {
		l := float64(k) / 50
		vShape += fmt.Sprintf("%v,%v,%v\n", l, (1+2*math.Abs(l-0.5))*100*l, 100*l)
	}
	tests := []struct {
		name, content string
		args          []string
		want          []string
	}{
		{"too few samples", h + strings.Join(lines[:5], ""), nil,
			[]string{`type "default": too few samples: 5 usable samples, need at least 10`}},
		{"unsorted loads", h + lines[0] + lines[2] + lines[1] + strings.Join(lines[3:], ""), nil,
			[]string{"ramp.csv:4: column load:", "below", "on line 3", "loads must increase"}},
		{"duplicate loads", h + lines[0] + lines[1] + lines[1] + strings.Join(lines[2:], ""), nil,
			[]string{"ramp.csv:4: column load: duplicate load", "(line 3 has it too)"}},
		{"negative power", h + lines[0] + "0.04,-5,40\n" + strings.Join(lines[2:], ""), nil,
			[]string{"ramp.csv:3: column power_w: -5 is negative"}},
		{"missing column", "load,throughput\n0.5,1\n", nil,
			[]string{"ramp.csv:1: header: missing column power_w"}},
		{"load in percent", h + "50,100,100\n", nil,
			[]string{"ramp.csv:2: column load: 50 is outside [0,1]"}},
		{"no stable region", h + vShape, nil,
			[]string{"curve without a stable region"}},
		{"bad window", h + good, []string{"--window", "3"},
			[]string{"options: window 3"}},
		{"empty file", "", nil, []string{"ramp.csv: empty file"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := writeTemp(t, "ramp.csv", tc.content)
			code, out, errs := calibrateRun(t, append([]string{"--samples", file, "--json"}, tc.args...)...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stdout %q, stderr %q", code, out, errs)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
		})
	}
}

func TestCalibrateUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--samples FILE.csv is required"},
		{[]string{"--samples", filepath.Join(t.TempDir(), "none.csv")}, "none.csv: no such file"},
		{[]string{"--samples", "x.csv", "extra"}, "unknown command"},
		{[]string{"--sample", "x.csv"}, "unknown flag"},
	} {
		code, _, errs := calibrateRun(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}
