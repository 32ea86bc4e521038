package cli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gpusched/gpusched/internal/testbed/etcdtest"
)

// TestServerEtcdBadInput: `gpusched server --store etcd://...` with a bad
// URL, an unreachable cluster, a bad or wrong prefix, or half of a TLS
// key pair exits with 2 and a message naming the problem, within a bounded
// wait.
func TestServerEtcdBadInput(t *testing.T) {
	c := etcdtest.Start(t, 1)
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Put(context.Background(), "/someone-else/config", "x"); err != nil {
		t.Fatal(err)
	}
	good := strings.TrimPrefix(c.URL(), "etcd://")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no member", []string{"--store", "etcd://"}, "no etcd member"},
		{"no port", []string{"--store", "etcd://127.0.0.1"}, "want HOST:PORT"},
		{"other scheme", []string{"--store", "zookeeper://h:1"}, "want bolt or etcd://"},
		{"unreachable", []string{"--store", "etcd://127.0.0.1:1", "--etcd-timeout", "500ms"}, "no answer from the etcd cluster within 500ms"},
		{"prefix without slash", []string{"--store", "etcd://" + good, "--etcd-prefix", "/gpusched"}, "must end with /"},
		{"foreign prefix", []string{"--store", "etcd://" + good, "--etcd-prefix", "/someone-else/"}, "wrong --etcd-prefix"},
		{"cert without key", []string{"--store", "etcd://" + good, "--etcd-cert", "c.pem"}, "--etcd-cert and --etcd-key go together"},
	}
	for _, tc := range cases {
		start := time.Now()
		code, _, errs := exe(t, append([]string{"server", "--listen", "127.0.0.1:0", "--data", t.TempDir()}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) || time.Since(start) > 10*time.Second {
			t.Errorf("%s: exit %d after %v, stderr %q; want 2 naming %q", tc.name, code, time.Since(start), errs, tc.want)
		}
	}
}
