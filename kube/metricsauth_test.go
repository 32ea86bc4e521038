package kube_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	authv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestMetricsAuthentication: served beyond loopback, /metrics answers only
// a bearer token the API server accepts for a user allowed to get
// /metrics (401 without a token or with a bad one, 403 for a service
// account without the grant, 200 with it); /healthz stays open for the
// kubelet's probes; --insecure serves /metrics to anyone.
func TestMetricsAuthentication(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	reader, nobody := e.serviceAccountToken("reader"), e.serviceAccountToken("nobody")
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: e.name + "-metrics"},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
	bind := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: e.name + "-metrics"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: e.name}}}
	rbac := e.cs.RbacV1()
	if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, bind, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(context.Background(), bind.Name, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(context.Background(), role.Name, metav1.DeleteOptions{})
	})

	url := "http://" + loopbackOf(t, e.gpusched("--metrics-addr", "0.0.0.0:0").metricsAddr(t))
	for _, tc := range []struct {
		path, token string
		want        int
		body        string
	}{
		{"/metrics", "", http.StatusUnauthorized, "send a Kubernetes bearer token"},
		{"/metrics", "not-a-token", http.StatusUnauthorized, "does not accept the token"},
		{"/metrics", nobody, http.StatusForbidden, `user "system:serviceaccount:` + e.name + `:nobody" may not get /metrics`},
		{"/metrics", reader, http.StatusOK, "gpusched_bind_latency_seconds"},
		{"/metrics", reader, http.StatusOK, "gpusched_schedule_round_seconds"}, // the decision kept
		{"/healthz", "", http.StatusOK, "ok"},
	} {
		code, body := get(t, url+tc.path, tc.token)
		if code != tc.want || !strings.Contains(body, tc.body) {
			t.Errorf("GET %s with token %.12q: %d %q, want %d and %q", tc.path, tc.token, code, firstLine(body), tc.want, tc.body)
		}
	}

	insecure := "http://" + loopbackOf(t, e.gpusched("--metrics-addr", "0.0.0.0:0", "--insecure").metricsAddr(t))
	if code, body := get(t, insecure+"/metrics", ""); code != http.StatusOK || !strings.Contains(body, "gpusched_bind_latency_seconds") {
		t.Errorf("--insecure: GET /metrics: %d %q", code, firstLine(body))
	}
}

// serviceAccountToken creates a service account in the test's namespace
// and returns a token of it.
func (e *kenv) serviceAccountToken(name string) string {
	e.t.Helper()
	ctx := context.Background()
	sa := &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := e.cs.CoreV1().ServiceAccounts(e.name).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	tok, err := e.cs.CoreV1().ServiceAccounts(e.name).CreateToken(ctx, name,
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return tok.Status.Token
}

// loopbackOf turns a listening address (any host) into 127.0.0.1:port.
func loopbackOf(t *testing.T, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// get sends GET url with a bearer token (none when "") and returns the
// status and body.
func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
