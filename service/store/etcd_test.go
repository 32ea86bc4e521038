package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gpusched/gpusched/internal/testbed/etcdtest"
)

func TestParseEtcdURL(t *testing.T) {
	cases := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{"etcd://127.0.0.1:2379", []string{"http://127.0.0.1:2379"}, ""},
		{"etcd://h1:2379,h2:2379,h3:2379/", []string{"http://h1:2379", "http://h2:2379", "http://h3:2379"}, ""},
		{"etcd://[::1]:2379", []string{"http://[::1]:2379"}, ""},
		{"etcd://", nil, "no etcd member"},
		{"http://h1:2379", nil, "want etcd://"},
		{"etcd://h1", nil, `member "h1": want HOST:PORT`},
		{"etcd://h1:port", nil, "want HOST:PORT"},
		{"etcd://h1:2379,,h2:2379", nil, `member ""`},
		{"etcd://user@h1:2379", nil, "want HOST:PORT"},
		{"etcd://:2379", nil, "want HOST:PORT"},
	}
	for _, c := range cases {
		got, err := ParseEtcdURL(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%q: err %v, want %q", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func FuzzParseEtcdURL(f *testing.F) {
	for _, s := range []string{"etcd://h:1", "etcd://a:1,b:2", "etcd://[::1]:2", "etcd://", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		eps, err := ParseEtcdURL(s)
		if err != nil {
			return
		}
		if len(eps) == 0 {
			t.Fatalf("%q: no endpoint and no error", s)
		}
		for _, ep := range eps {
			if !strings.HasPrefix(ep, "http://") || strings.ContainsAny(ep[7:], "/?#@ ") {
				t.Fatalf("%q: bad endpoint %q", s, ep)
			}
		}
	})
}

// TestEtcdOpenErrors: an unreachable cluster fails within the dial timeout
// with ErrUnavailable; a bad prefix, a prefix holding foreign keys and an
// unknown schema fail with ErrInvalid, naming the problem.
func TestEtcdOpenErrors(t *testing.T) {
	start := time.Now()
	_, err := OpenEtcd(EtcdOptions{Endpoints: []string{"http://127.0.0.1:1"}, DialTimeout: 300 * time.Millisecond})
	if !errors.Is(err, ErrUnavailable) || time.Since(start) > 5*time.Second {
		t.Fatalf("unreachable cluster: %v after %v, want ErrUnavailable soon", err, time.Since(start))
	}
	for _, p := range []string{"/", "/no-slash", "with space/"} {
		if _, err := OpenEtcd(EtcdOptions{Endpoints: []string{"http://127.0.0.1:1"}, Prefix: p}); !errors.Is(err, ErrInvalid) {
			t.Errorf("prefix %q: %v, want ErrInvalid", p, err)
		}
	}
	c := etcdtest.Start(t, 1)
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx := context.Background()
	if _, err := cli.Put(ctx, "/other/app/config", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(ctx, "/future/schema", "9"); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{"/other/": "not a gpusched store; wrong --etcd-prefix", "/future/": `unsupported schema "9"`}
	for prefix, want := range cases {
		_, err := OpenEtcd(EtcdOptions{Endpoints: c.Endpoints(), Prefix: prefix})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("prefix %s: %v, want %q", prefix, err, want)
		}
	}
	s, err := OpenEtcd(EtcdOptions{Endpoints: c.Endpoints(), Prefix: "/fresh/"})
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "jobs/j1", "x")
	s.Close()
	s, err = OpenEtcd(EtcdOptions{Endpoints: c.Endpoints(), Prefix: "/fresh/"}) // reopen: the marker is there
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	if kv := mustGet(t, s, "jobs/j1"); string(kv.Value) != "x" {
		t.Fatalf("after reopen: %q", kv.Value)
	}
}
