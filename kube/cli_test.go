package kube_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadKubeconfig: `gpusched kube` and `gpusched progress` exit 2 with
// a message that names the problem when the kubeconfig is missing,
// malformed, or points at an API server that does not answer; so do bad
// flags. (No bed needed.)
func TestBadKubeconfig(t *testing.T) {
	dir := t.TempDir()
	unreachable := filepath.Join(dir, "unreachable")
	if err := os.WriteFile(unreachable, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("{{{ not yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"kube", "--kubeconfig", missing}, "kubeconfig " + missing + ": stat " + missing + ": no such file or directory"},
		{[]string{"kube", "--kubeconfig", garbage}, "kubeconfig " + garbage},
		{[]string{"kube", "--kubeconfig", unreachable}, "cannot reach the API server https://127.0.0.1:1 (from kubeconfig " + unreachable + ")"},
		{[]string{"progress", "--kubeconfig", unreachable, "--pod", "p", "--steps", "1"}, "cannot reach the API server https://127.0.0.1:1"},
		{[]string{"progress", "--kubeconfig", missing, "--pod", "p"}, "--steps is required"},
		{[]string{"kube", "--kubeconfig", unreachable, "--scaler", "lottery"}, `unknown scaler "lottery"`},
		{[]string{"kube", "--kubeconfig", unreachable, "--node-selector", "a in (b"}, "--node-selector"},
		{[]string{"kube", "--kubeconfig", unreachable, "--policy", "lottery"}, `unknown policy "lottery"`},
	} {
		cmd := exec.Command(binary, tc.args...)
		cmd.Env = append(os.Environ(), "KUBERNETES_SERVICE_HOST=", "KUBECONFIG=")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("gpusched %s: %v, want exit status 2\n%s", strings.Join(tc.args, " "), err, out)
			continue
		}
		if !strings.Contains(string(out), tc.want) {
			t.Errorf("gpusched %s: output %q lacks %q", strings.Join(tc.args, " "), out, tc.want)
		}
	}
}
