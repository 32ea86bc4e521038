package cli_test

import (
	"strings"
	"testing"
)

// TestETABadInput: these fail before any request (no server runs here).
func TestETABadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"eta"}, "want one job ID"},
		{[]string{"eta", "j1", "j2"}, "want one job ID"},
		{[]string{"eta", "j1", "--accuracy"}, "not both"},
		{[]string{"submit", "--gpus", "1", "--time", "1.5s", "--", "x"}, `--time "1.5s"`},
		{[]string{"submit", "--gpus", "1", "--time", "soon", "--", "x"}, "Slurm"},
		{[]string{"submit", "--gpus", "1", "--time", "400-00", "--", "x"}, "--time: "},
		{[]string{"submit", "--gpus", "1", "--total-steps", "-3", "--", "x"}, "--total-steps: -3"},
		{[]string{"submit", "--time", "2h", "spec.yaml"}, "--time cannot be combined with a spec file"},
	} {
		code, _, errs := run(t, append(tc.args, "--server", "http://127.0.0.1:1")...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}
