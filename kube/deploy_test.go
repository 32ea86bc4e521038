package kube_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// deployDir holds the manifests of `kubectl apply -f deploy/kubernetes/`.
const deployDir = "../deploy/kubernetes"

// serviceAccount is the identity the manifests give gpusched.
const serviceAccount = "system:serviceaccount:gpusched:gpusched"

// TestDeployManifests: the README's `kubectl apply -f deploy/kubernetes/`
// is accepted by the API server; the ClusterRole gives the service account
// what gpusched needs and no more (kubectl auth can-i); and `gpusched
// kube` running with a token of that service account, with leader
// election on the Lease the Role allows, binds a pod (Binding, Scheduled
// event) and says why another waits (PodScheduled condition,
// FailedScheduling event) — everything the mode writes, with the
// manifests' permissions only.
func TestDeployManifests(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if out, err := e.bed.Kubectl(ctx, "apply", "-f", deployDir); err != nil {
		t.Fatalf("kubectl apply -f %s: %v\n%s", deployDir, err, out)
	}
	t.Cleanup(func() { _, _ = e.bed.Kubectl(context.Background(), "delete", "-f", deployDir, "--wait=false") })

	for _, tc := range []struct {
		verb, resource, ns string
		want               bool
	}{
		{"list", "nodes", "", true}, {"watch", "nodes", "", true},
		{"list", "pods", "", true}, {"delete", "pods", "team-a", true}, {"patch", "pods", "team-a", true},
		{"create", "pods/binding", "team-a", true}, {"patch", "pods/status", "team-a", true},
		{"create", "events", "team-a", true}, {"patch", "events", "team-a", true},
		{"watch", "jobs.batch", "team-a", true}, {"patch", "jobs.batch", "team-a", true},
		{"create", "leases.coordination.k8s.io", "gpusched", true},
		// (Volcano's resources are not served by this bed: kubectl cannot
		// check them here.)
		{"create", "configmaps", "team-a", true}, {"update", "configmaps", "team-a", true},
		{"watch", "podgroups.scheduling.k8s.io", "team-a", true}, {"patch", "podgroups.scheduling.k8s.io/status", "team-a", true},
		{"update", "leases.coordination.k8s.io/gpusched", "gpusched", true},
		{"create", "tokenreviews.authentication.k8s.io", "", true},
		{"create", "subjectaccessreviews.authorization.k8s.io", "", true},
		{"watch", "resourceslices.resource.k8s.io", "", true}, {"watch", "deviceclasses.resource.k8s.io", "", true},
		{"watch", "resourceclaims.resource.k8s.io", "team-a", true}, {"update", "resourceclaims.resource.k8s.io", "team-a", true},
		{"update", "resourceclaims.resource.k8s.io/status", "team-a", true},
		{"create", "resourceclaims.resource.k8s.io", "team-a", false}, {"delete", "resourceclaims.resource.k8s.io", "team-a", false},
		{"update", "resourceslices.resource.k8s.io", "", false},
		{"watch", "persistentvolumeclaims", "team-a", true}, {"watch", "persistentvolumes", "", true}, {"watch", "namespaces", "", true},
		// and no more:
		{"create", "pods", "team-a", false}, {"update", "pods/status", "team-a", false},
		{"get", "secrets", "team-a", false}, {"update", "nodes", "", false}, {"delete", "nodes", "", false},
		{"update", "leases.coordination.k8s.io/other", "gpusched", false},
		{"create", "leases.coordination.k8s.io", "team-a", false},
		{"delete", "jobs.batch", "team-a", false}, {"delete", "configmaps", "team-a", false},
		{"patch", "podgroups.scheduling.k8s.io", "team-a", false}, {"delete", "podgroups.scheduling.k8s.io", "team-a", false},
		{"update", "persistentvolumeclaims", "team-a", false}, {"update", "namespaces", "", false},
	} {
		args := []string{"auth", "can-i", tc.verb, tc.resource, "--as", serviceAccount}
		if res, sub, ok := strings.Cut(tc.resource, "/"); ok && (strings.HasPrefix(res, "pods") || strings.HasPrefix(res, "podgroups") || strings.HasPrefix(res, "resourceclaims")) {
			args[3] = res
			args = append(args, "--subresource", sub)
		}
		if tc.ns != "" {
			args = append(args, "-n", tc.ns)
		}
		out, _ := e.bed.Kubectl(ctx, args...) // exit status 1 for "no"
		if got := strings.TrimSpace(string(out)) == "yes"; got != tc.want {
			t.Errorf("can the service account %s %s in %q? %q, want %v", tc.verb, tc.resource, tc.ns, out, tc.want)
		}
	}

	tok, err := e.cs.CoreV1().ServiceAccounts("gpusched").CreateToken(ctx, "gpusched",
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(t.TempDir(), "sa.kubeconfig")
	if err := os.WriteFile(kc, fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: bed, cluster: {server: %q, certificate-authority: %q}}]
users: [{name: gpusched, user: {token: %q}}]
contexts: [{name: gpusched, context: {cluster: bed, user: gpusched}}]
current-context: gpusched
`, e.bed.Server, e.bed.CA, tok.Status.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	e.node(e.name+"-a", "NVIDIA-A100-SXM4-80GB", 8)
	g := e.run("kube", "--kubeconfig", kc, "--scheduler-name", e.name, "--node-selector", e2eLabel+"="+e.name,
		"--metrics-addr", "0.0.0.0:0", "--leader-elect", "--namespace", "gpusched")
	e.create(e.podSpec("fits", 8))
	lonely := e.podSpec("lonely", 1)
	lonely.Labels["gpusched.io/job"] = "pair"
	lonely.Annotations["gpusched.io/min-replicas"] = "2"
	e.create(lonely)
	e.waitBound("fits", 60*time.Second)
	e.eventually("events and the waiting pod's condition", 30*time.Second, func() string {
		if !e.hasEvent("fits", "Scheduled", "Successfully assigned") {
			return "no Scheduled event"
		}
		if !e.hasEvent("lonely", "FailedScheduling", "waiting for the gang") {
			return "no FailedScheduling event"
		}
		if c := condition(e.pod("lonely")); !strings.Contains(c, "False Unschedulable: waiting for the gang: 1 of its 2 pods") {
			return c
		}
		return ""
	})
	// /metrics beyond loopback: the service account may review tokens and
	// accesses (system:auth-delegator), so a token is judged (403: the
	// service account itself may not get /metrics), not refused for want
	// of permissions (503).
	url := "http://" + loopbackOf(t, g.metricsAddr(t)) + "/metrics"
	if code, body := get(t, url, tok.Status.Token); code != http.StatusForbidden {
		t.Errorf("GET /metrics with the service account's token: %d %q, want 403", code, firstLine(body))
	}
}

func ptr[T any](v T) *T { return &v }
