package cli_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/service/shim"
)

// binary is the gpusched executable built once for the end-to-end tests.
var binary string

// TestMain builds the binary and runs the tests, or runs a replica's shim
// when the test binary is started as one by the agents the tests run
// (servicetest.StartAgent; agent.Config.Shim defaults to the running
// program and "shim").
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "shim" {
		os.Exit(shim.Main(os.Args[2:], os.Stderr))
	}
	dir, err := os.MkdirTemp("", "gpusched-e2e-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "gpusched")
	build := exec.Command("go", "build", "-o", binary, "../cmd/gpusched")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("build gpusched: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// exe runs the real binary and returns its exit status, stdout and stderr.
func exe(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), errb.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

func TestBinarySimDefault(t *testing.T) {
	code, out, errs := exe(t, "sim")
	if code != 0 || !strings.Contains(out, "avg JCT") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.trace")
	good, err := os.ReadFile(testdata + "gavel/small_test.trace")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(good), "\n")
	lines[2] = "ResNet-18 (batch size 32)\tcmd\tdir\t-n\t1\tMANY\t1\t1\t-1\t0\n"
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	badConfig := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badConfig, []byte("scalr: threshold\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"malformed line", []string{"--trace", bad}, bad + ":3:"},
		{"unknown format", []string{"--trace", testdata + "gavel/small_test.trace", "--format", "csv2"}, "csv2"},
		{"missing file", []string{"--trace", filepath.Join(dir, "nope.trace")}, "nope.trace"},
		{"negative GPUs", []string{"--gpus", "v100=-1"}, `"v100=-1"`},
		{"unknown policy", []string{"--policy", "lottery"}, `unknown policy "lottery"`},
		{"unknown flag", []string{"--gpu", "v100=1"}, "unknown flag"},
		{"both clusters", []string{"--gpus", "v100=1", "--cluster", "x.yaml"}, "not both"},
		{"bad cluster file", []string{"--cluster", bad}, "bad.trace"},
		{"unknown job type", []string{"--trace", testdata + "gavel/small_test.trace", "--throughputs", testdata + "../clusters/matrix-v100-only.json"}, "matrix"},
		{"unknown scaler", []string{"--scaler", "magic"}, `unknown scaler "magic"`},
		{"bad config key", []string{"--config", badConfig}, `unknown field "scalr"`},
		{"missing config", []string{"--config", filepath.Join(dir, "nope.yaml")}, "nope.yaml"},
		{"elastic-min range", []string{"--elastic-min", "1.5"}, "--elastic-min"},
		{"threshold range", []string{"--scaler", "threshold", "--expand-threshold", "1.5"}, "expandThreshold"}, // above st = 1
		{"scaler period", []string{"--scaler-period", "0s"}, "--scaler-period"},
		{"max load", []string{"--scaler", "fulfillment", "--max-load", "0"}, "maximum load"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			events, report := filepath.Join(dir, tc.name+".jsonl"), filepath.Join(dir, tc.name+"-report")
			args := append([]string{"sim", "--events", events, "--report", report}, tc.args...)
			code, out, errs := exe(t, args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr: %s)", code, errs)
			}
			if !strings.Contains(errs, tc.want) {
				t.Errorf("stderr %q does not name %q", errs, tc.want)
			}
			if out != "" {
				t.Errorf("stdout not empty: %q", out)
			}
			for _, p := range []string{events, report} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s was written", p)
				}
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
				t.Errorf("temporary files left behind: %v", left)
			}
		})
	}
}
