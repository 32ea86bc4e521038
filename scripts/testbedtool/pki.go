package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// serviceIP is the first address of the bed's service range
// (kube-apiserver --service-cluster-ip-range=10.96.0.0/16): the in-cluster
// address of the `kubernetes` service.
const serviceIP = "10.96.0.1"

// certValidity is how long the bed's certificates are valid.
const certValidity = 365 * 24 * time.Hour

// issued is a certificate with its key.
type issued struct {
	cert *x509.Certificate
	der  []byte
	key  *ecdsa.PrivateKey
}

// writePKI writes the bed's CA, serving and admin certificates and the
// service-account key pair into dir.
func writePKI(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	now := time.Now()
	ca, err := issue(&x509.Certificate{
		Subject:               pkix.Name{CommonName: "gpusched-testbed-ca"},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		IsCA:                  true,
		BasicConstraintsValid: true,
	}, nil, now)
	if err != nil {
		return err
	}
	serving, err := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP(serviceIP)},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
	}, ca, now)
	if err != nil {
		return err
	}
	admin, err := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kubernetes-admin", Organization: []string{"system:masters"}},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, now)
	if err != nil {
		return err
	}
	for name, c := range map[string]*issued{"ca": ca, "apiserver": serving, "admin": admin} {
		if err := writePair(dir, name, c); err != nil {
			return err
		}
	}
	return writeSAKeys(dir)
}

// issue creates a key and a certificate from tmpl, signed by parent (or
// self-signed when parent is nil).
func issue(tmpl *x509.Certificate, parent *issued, now time.Time) (*issued, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pki: key for %s: %w", tmpl.Subject.CommonName, err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, fmt.Errorf("pki: serial for %s: %w", tmpl.Subject.CommonName, err)
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(certValidity)
	signer, signerCert := key, tmpl
	if parent != nil {
		signer, signerCert = parent.key, parent.cert
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, &key.PublicKey, signer)
	if err != nil {
		return nil, fmt.Errorf("pki: certificate for %s: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("pki: certificate for %s: %w", tmpl.Subject.CommonName, err)
	}
	return &issued{cert: cert, der: der, key: key}, nil
}

// writePair writes NAME.crt and NAME.key (owner-only) into dir.
func writePair(dir, name string, c *issued) error {
	keyPEM, err := keyPEM(c.key)
	if err != nil {
		return fmt.Errorf("pki: %s key: %w", name, err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.der})
	if err := os.WriteFile(filepath.Join(dir, name+".crt"), certPEM, 0o644); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".key"), keyPEM, 0o600); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	return nil
}

// writeSAKeys writes the service-account signing key sa.key and its public
// half sa.pub into dir.
func writeSAKeys(dir string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("pki: service-account key: %w", err)
	}
	priv, err := keyPEM(key)
	if err != nil {
		return fmt.Errorf("pki: service-account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return fmt.Errorf("pki: service-account key: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sa.key"), priv, 0o600); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	if err := os.WriteFile(filepath.Join(dir, "sa.pub"), pubPEM, 0o644); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	return nil
}

func keyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// writeKubeconfig writes out, a kubeconfig for the admin certificate of
// the pki directory at server, which must be https://HOST:PORT.
func writeKubeconfig(pki, server, out string) error {
	u, err := url.Parse(server)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" || u.Port() == "" || u.Path != "" {
		return fmt.Errorf("kubeconfig: server %q is not https://HOST:PORT: %w", server, errUsage)
	}
	data := map[string]string{}
	for _, f := range []string{"ca.crt", "admin.crt", "admin.key"} {
		b, err := os.ReadFile(filepath.Join(pki, f))
		if err != nil {
			return fmt.Errorf("kubeconfig: %w", err)
		}
		data[f] = base64.StdEncoding.EncodeToString(b)
	}
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: testbed
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: admin
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: testbed
  context:
    cluster: testbed
    user: admin
current-context: testbed
`, server, data["ca.crt"], data["admin.crt"], data["admin.key"])
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	return nil
}
