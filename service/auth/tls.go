package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Files of a self-signed deployment, under DATA/tls/.
const (
	CAFile        = "ca.crt"
	caKeyFile     = "ca.key"
	serverCrtFile = "server.crt"
	serverKeyFile = "server.key"
)

// SelfSigned is the TLS material of a server started with
// --tls-self-signed: a CA (kept in the data directory, made on first
// start) and a server certificate it signed for the server's names.
type SelfSigned struct {
	// CAPath is the CA certificate agents and the CLI trust (--ca).
	CAPath string
	// Fingerprint is the SHA-256 of the CA certificate (DER), as
	// "SHA256:AB:CD:...": check it before trusting the file.
	Fingerprint string
	// Cert is the server's certificate and key.
	Cert tls.Certificate
}

// LoadSelfSigned returns the self-signed TLS material in dir: it makes the
// CA when dir has none, and a server certificate for hosts (names and
// addresses, plus localhost, 127.0.0.1 and ::1) whenever the stored one
// does not cover them or expires within 30 days.
func LoadSelfSigned(dir string, hosts []string, now time.Time) (*SelfSigned, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	ca, caKey, err := loadOrMakeCA(dir, now)
	if err != nil {
		return nil, err
	}
	hosts = append(hosts, "localhost", "127.0.0.1", "::1")
	cert, err := loadServerCert(dir, ca, hosts, now)
	if err != nil {
		if cert, err = makeServerCert(dir, ca, caKey, hosts, now); err != nil {
			return nil, err
		}
	}
	sum := sha256.Sum256(ca.Raw)
	return &SelfSigned{CAPath: filepath.Join(dir, CAFile), Fingerprint: Fingerprint(sum[:]), Cert: cert}, nil
}

// Fingerprint formats a SHA-256 digest as "SHA256:AB:CD:...".
func Fingerprint(sum []byte) string {
	h := strings.ToUpper(hex.EncodeToString(sum))
	var parts []string
	for i := 0; i < len(h); i += 2 {
		parts = append(parts, h[i:i+2])
	}
	return "SHA256:" + strings.Join(parts, ":")
}

func loadOrMakeCA(dir string, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	crt, key := filepath.Join(dir, CAFile), filepath.Join(dir, caKeyFile)
	if pair, err := tls.LoadX509KeyPair(crt, key); err == nil {
		c, err := x509.ParseCertificate(pair.Certificate[0])
		k, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
		if err == nil && ok && c.IsCA {
			return c, k, nil
		}
		return nil, nil, fmt.Errorf("tls: %s is not a CA certificate with an ECDSA key; remove %s to make a new CA", crt, dir)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("tls: load the CA in %s: %w", dir, err)
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("tls: %w", err)
	}
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "gpusched CA", Organization: []string{"gpusched"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign, MaxPathLenZero: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		return nil, nil, fmt.Errorf("tls: make the CA: %w", err)
	}
	if err := writePEM(key, crt, der, k); err != nil {
		return nil, nil, err
	}
	c, err := x509.ParseCertificate(der)
	return c, k, err
}

func loadServerCert(dir string, ca *x509.Certificate, hosts []string, now time.Time) (tls.Certificate, error) {
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, serverCrtFile), filepath.Join(dir, serverKeyFile))
	if err != nil {
		return pair, err
	}
	c, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return pair, err
	}
	if err := c.CheckSignatureFrom(ca); err != nil || now.Add(30*24*time.Hour).After(c.NotAfter) {
		return pair, errors.New("renew")
	}
	for _, h := range hosts {
		if c.VerifyHostname(h) != nil {
			return pair, errors.New("renew")
		}
	}
	return pair, nil
}

func makeServerCert(dir string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, hosts []string, now time.Time) (tls.Certificate, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tls: %w", err)
	}
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "gpusched server", Organization: []string{"gpusched"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tls: make the server certificate: %w", err)
	}
	crt, key := filepath.Join(dir, serverCrtFile), filepath.Join(dir, serverKeyFile)
	if err := writePEM(key, crt, der, k); err != nil {
		return tls.Certificate{}, err
	}
	return tls.LoadX509KeyPair(crt, key)
}

// writePEM writes a key (0600) and its certificate (0644).
func writePEM(keyPath, crtPath string, der []byte, k *ecdsa.PrivateKey) error {
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	if err := writeSecret(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})); err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	if err := writeSecret(crtPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})); err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	return os.Chmod(crtPath, 0o644)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

// CAPool reads a CA certificate file (PEM) for a client's --ca.
func CAPool(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", path)
	}
	return pool, nil
}
