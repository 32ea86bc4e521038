package auth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/store"
)

func newTokens(t *testing.T) (*Tokens, *time.Time) {
	t.Helper()
	st := store.NewMem(store.MemOptions{})
	t.Cleanup(func() { st.Close() })
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	return NewTokens(st, func() time.Time { return now }), &now
}

// TestTokenLifecycle: a created token verifies as its user and role, is
// listed without its secret, stops working at once when revoked, and a
// token with a lifetime expires.
func TestTokenLifecycle(t *testing.T) {
	ctx := context.Background()
	ts, now := newTokens(t)
	c, err := ts.Create(ctx, api.TokenRequest{User: "alice", Role: api.RoleUser}, "admin root")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Token, "gps_u_"+c.ID+"_") || c.User != "alice" || c.Role != api.RoleUser {
		t.Fatalf("created %+v", c)
	}
	id, err := ts.Verify(ctx, c.Token)
	if err != nil || id.Kind != KindUser || id.User != "alice" || id.Admin() || id.String() != "user alice" {
		t.Fatalf("verify: %+v %v", id, err)
	}
	list, err := ts.List(ctx)
	if err != nil || len(list) != 1 || list[0].ID != c.ID || list[0].CreatedBy != "admin root" {
		t.Fatalf("list %+v %v", list, err)
	}
	// A wrong secret with the right ID (its last character changed), a
	// different kind letter, garbage.
	last := "A"
	if strings.HasSuffix(c.Token, last) {
		last = "B"
	}
	for _, bad := range []string{c.Token[:len(c.Token)-1] + last, strings.Replace(c.Token, "gps_u_", "gps_j_", 1), "Bearer x", "", "gps_u_zz_x"} {
		if _, err := ts.Verify(ctx, bad); !errors.Is(err, ErrUnauthenticated) {
			t.Errorf("verify %q: %v, want ErrUnauthenticated", bad, err)
		}
	}
	if _, err := ts.Revoke(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Verify(ctx, c.Token); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("revoked token still works: %v", err)
	}
	if _, err := ts.Revoke(ctx, c.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second revoke: %v", err)
	}
	short, err := ts.Create(ctx, api.TokenRequest{User: "bob", TTLS: 60}, "admin root")
	if err != nil || short.Role != api.RoleUser || short.ExpiresAt == nil {
		t.Fatalf("%+v %v", short, err)
	}
	*now = now.Add(59 * time.Second)
	if _, err := ts.Verify(ctx, short.Token); err != nil {
		t.Errorf("before expiry: %v", err)
	}
	*now = now.Add(time.Second)
	if _, err := ts.Verify(ctx, short.Token); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("after expiry: %v", err)
	}
}

// TestNodeCredentials: a node name is claimed once; revoking the
// credential frees it.
func TestNodeCredentials(t *testing.T) {
	ctx := context.Background()
	ts, _ := newTokens(t)
	tok, err := ts.CreateNode(ctx, "n1", "join token x")
	if err != nil {
		t.Fatal(err)
	}
	id, err := ts.Verify(ctx, tok)
	if err != nil || id.Kind != KindNode || id.Node != "n1" || id.Admin() {
		t.Fatalf("%+v %v", id, err)
	}
	if _, err := ts.CreateNode(ctx, "n1", "join token y"); !errors.Is(err, ErrNodeTaken) {
		t.Fatalf("second credential for n1: %v", err)
	}
	if _, err := ts.Revoke(ctx, id.TokenID); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.CreateNode(ctx, "n1", "join token y"); err != nil {
		t.Fatalf("after revoke: %v", err)
	}
}

// TestJobTokens: a job token verifies as its job only.
func TestJobTokens(t *testing.T) {
	ctx := context.Background()
	ts, _ := newTokens(t)
	tok, err := ts.JobToken(ctx, "j7")
	if err != nil {
		t.Fatal(err)
	}
	id, err := ts.Verify(ctx, tok)
	if err != nil || id.Kind != KindJob || id.Job != "j7" {
		t.Fatalf("%+v %v", id, err)
	}
	forged := strings.Replace(tok, "_j7_", "_j8_", 1)
	if _, err := ts.Verify(ctx, forged); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("a job token reused for another job: %v", err)
	}
	again, _ := ts.JobToken(ctx, "j7")
	if again != tok {
		t.Error("job tokens are not stable")
	}
}

// TestBootstrap writes the admin token once (0600); deleting the file and
// starting again rotates it.
func TestBootstrap(t *testing.T) {
	ctx := context.Background()
	ts, _ := newTokens(t)
	path := filepath.Join(t.TempDir(), "admin.token")
	if wrote, err := ts.Bootstrap(ctx, path); err != nil || !wrote {
		t.Fatalf("bootstrap: %v %v", wrote, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("admin.token: %v %v", fi, err)
	}
	first, _ := os.ReadFile(path)
	id, err := ts.Verify(ctx, strings.TrimSpace(string(first)))
	if err != nil || !id.Admin() || id.User != "admin" {
		t.Fatalf("%+v %v", id, err)
	}
	if wrote, err := ts.Bootstrap(ctx, path); err != nil || wrote {
		t.Fatalf("second bootstrap rewrote the file: %v %v", wrote, err)
	}
	os.Remove(path)
	if _, err := ts.Bootstrap(ctx, path); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Verify(ctx, strings.TrimSpace(string(first))); err == nil {
		t.Error("the old bootstrap token still works after rotation")
	}
}

func TestAudit(t *testing.T) {
	ctx := context.Background()
	st := store.NewMem(store.MemOptions{})
	defer st.Close()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := NewAudit(st, func() time.Time { at = at.Add(time.Second); return at })
	for _, act := range []string{"POST /v1/jobs", "POST /v1/jobs/j1/cancel", "POST /v1/tokens"} {
		if err := a.Record(ctx, api.AuditEntry{Who: "user alice", Action: act, Status: 200}); err != nil {
			t.Fatal(err)
		}
	}
	es, err := a.List(ctx, 2)
	if err != nil || len(es) != 2 || es[0].Action != "POST /v1/jobs/j1/cancel" || es[1].Action != "POST /v1/tokens" || !es[0].Time.Before(es[1].Time) {
		t.Fatalf("%+v %v", es, err)
	}
}

// TestSelfSigned: the CA is made once and its server certificate verifies
// for the requested names.
func TestSelfSigned(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	ss, err := LoadSelfSigned(dir, []string{"head.example", "10.1.2.3"}, now)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := CAPool(ss.CAPath)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(ss.Cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"head.example", "10.1.2.3", "localhost", "127.0.0.1"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: h}); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
	if fi, _ := os.Stat(filepath.Join(dir, caKeyFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf("CA key mode %v", fi.Mode())
	}
	again, err := LoadSelfSigned(dir, []string{"head.example"}, now)
	if err != nil || again.Fingerprint != ss.Fingerprint || !strings.HasPrefix(ss.Fingerprint, "SHA256:") {
		t.Fatalf("second load: %v, fingerprints %s %s", err, ss.Fingerprint, again.Fingerprint)
	}
	// A new name gets a new server certificate from the same CA.
	third, err := LoadSelfSigned(dir, []string{"other.example"}, now)
	if err != nil || third.Fingerprint != ss.Fingerprint {
		t.Fatal(err)
	}
	var _ tls.Certificate = third.Cert
}

// FuzzParseToken: parse never panics, and what it accepts is a token of a
// known kind whose parts are well formed.
func FuzzParseToken(f *testing.F) {
	for _, s := range []string{"gps_u_0123456789abcdef_" + strings.Repeat("A", 43), "gps_b_j7_" + strings.Repeat("a", 64),
		"gps_", "gps_x_1_2", "Bearer gps_u_", "gps_u__", strings.Repeat("gps_", 200)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parse(s)
		if err != nil {
			return
		}
		if !strings.ContainsRune("ujnb", rune(p.kind)) || p.id == "" || p.secret == "" || len(s) > maxToken {
			t.Fatalf("accepted %q as %+v", s, p)
		}
	})
}

// TestAuditPrune: Prune deletes exactly the entries older than the cutoff
// (in several transactions where there are more than pruneBatch: the
// batching itself is store.DeleteKeys's, tested there) and keeps a key
// whose time does not parse.
func TestAuditPrune(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		entries int
		keep    int // entries at or after the cutoff
	}{
		{"more than one batch", 2500, 1000},
		{"nothing old", 10, 10},
		{"everything old", 10, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := store.NewMem(store.MemOptions{})
			defer st.Close()
			at := t0
			a := NewAudit(st, func() time.Time { at = at.Add(time.Second); return at })
			for i := range tc.entries {
				if err := a.Record(ctx, api.AuditEntry{Who: "user alice", Action: "POST /v1/jobs", Target: fmt.Sprintf("j%d", i), Status: 201}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := st.Put(ctx, auditPrefix+"written-by-hand", []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
			old := tc.entries - tc.keep
			cutoff := t0.Add(time.Duration(old+1) * time.Second) // entry i was recorded at t0 + (i+1) s
			n, err := a.Prune(ctx, cutoff)
			if err != nil || n != old {
				t.Fatalf("pruned %d, %v; want %d", n, err, old)
			}
			kvs, _, err := st.List(ctx, auditPrefix)
			if err != nil || len(kvs) != tc.keep+1 {
				t.Fatalf("%d keys left, %v; want %d and the hand-written one", len(kvs), err, tc.keep)
			}
			if es, err := a.List(ctx, 0); err != nil || tc.keep > 0 && (es[0].Target != fmt.Sprintf("j%d", old) || es[0].Time.Before(cutoff)) {
				t.Errorf("oldest kept %+v, %v; want j%d", es[0], err, old)
			}
		})
	}
}
