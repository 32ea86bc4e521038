package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunRejectsBadCommandLines(t *testing.T) {
	for _, args := range [][]string{
		nil, {"ports"}, {"ports", "x"}, {"ports", "0"}, {"ports", "65"}, {"pki"},
		{"kubeconfig", "d", "https://127.0.0.1:1"}, {"setup", "d"}, {"setup", "d", "0"}, {"nope", "d"},
	} {
		if err := run(args); !errors.Is(err, errUsage) {
			t.Errorf("run(%q) = %v, want a usage error", args, err)
		}
	}
}

func TestFreePortsAreDistinct(t *testing.T) {
	ports, err := freePorts("8")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Fatalf("ports %v: %d repeated or invalid", ports, p)
		}
		seen[p] = true
	}
}

// TestPKIChains checks that the serving and admin certificates verify
// against the CA for their use, names and group, and that the keys match.
func TestPKIChains(t *testing.T) {
	dir := t.TempDir()
	if err := writePKI(dir); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(load(t, dir, "ca").Leaf)

	serving := load(t, dir, "apiserver")
	for _, name := range []string{"127.0.0.1", "localhost", "kubernetes.default.svc", serviceIP} {
		_, err := serving.Leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: name,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		if err != nil {
			t.Errorf("serving certificate for %s: %v", name, err)
		}
	}
	admin := load(t, dir, "admin")
	if _, err := admin.Leaf.Verify(x509.VerifyOptions{Roots: roots,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("admin certificate: %v", err)
	}
	if got := admin.Leaf.Subject.Organization; len(got) != 1 || got[0] != "system:masters" {
		t.Errorf("admin groups = %v, want [system:masters]", got)
	}
	for _, f := range []string{"sa.key", "sa.pub"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if blk, _ := pem.Decode(b); blk == nil {
			t.Errorf("%s is not PEM", f)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "admin.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("admin.key mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
}

// load reads NAME.crt and NAME.key of dir as a TLS pair (which fails when
// the key does not match the certificate).
func load(t *testing.T, dir, name string) tls.Certificate {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key"))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return pair
}

func TestKubeconfig(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "kubeconfig")
	if err := writePKI(dir); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"http://127.0.0.1:6443", "https://127.0.0.1", "127.0.0.1:6443", "https://:1", "https://h:1/x"} {
		if err := writeKubeconfig(dir, bad, out); !errors.Is(err, errUsage) {
			t.Errorf("server %q: err = %v, want a usage error", bad, err)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a rejected server left a kubeconfig behind: %v", err)
	}
	if err := writeKubeconfig(dir, "https://127.0.0.1:6443", out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"server: https://127.0.0.1:6443", "certificate-authority-data: LS0t",
		"client-certificate-data: LS0t", "client-key-data: LS0t", "current-context: testbed"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("kubeconfig lacks %q:\n%s", want, b)
		}
	}
}

func TestWritePKIReportsUnwritableDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writePKI(filepath.Join(file, "pki")); err == nil || !strings.Contains(err.Error(), "pki") {
		t.Errorf("writePKI under a file: err = %v, want a pki error", err)
	}
}

func TestSetupWritesABed(t *testing.T) {
	dir := t.TempDir()
	if err := setup(dir, "3"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"kubeconfig", "pki/ca.crt", "pki/apiserver.key", "pki/sa.pub"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("setup did not write %s: %v", f, err)
		}
	}
}
