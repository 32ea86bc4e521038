package cli_test

import (
	"strings"
	"testing"
)

// TestServerFlagErrors: bad server and dev flags exit 2, naming the flag,
// before anything starts.
func TestServerFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"server", "--data", dir, "--audit-retention", "-1h"}, "--audit-retention -1h0m0s: must be positive, or 0 to keep every entry"},
		{[]string{"dev", "--data", dir, "--audit-retention", "-24h"}, "--audit-retention -24h0m0s"},
		{[]string{"server", "--data", dir, "--audit-retention", "ninety days"}, `invalid argument "ninety days" for "--audit-retention"`},
		{[]string{"server", "--data", dir, "--body-timeout", "0s"}, "--body-timeout 0s: must be positive"},
		{[]string{"server", "--data", dir, "--job-retention", "-1h"}, "--job-retention -1h0m0s: must be positive, or 0 to keep every job"},
		{[]string{"dev", "--data", dir, "--job-retention", "-1m"}, "--job-retention -1m0s"},
		{[]string{"server", "--data", dir, "--heartbeat-timeout", "0s"}, "--heartbeat-timeout 0s: must be positive"},
		{[]string{"server", "--data", dir, "--master-ports", "30000-29000"}, `--master-ports "30000-29000": want FIRST-LAST`},
		{[]string{"server", "--data", dir, "--master-ports", "29500"}, `--master-ports "29500": want FIRST-LAST`},
		{[]string{"server", "--data", dir, "--store", "postgres://db"}, `--store "postgres://db": want bolt or etcd://`},
	} {
		if code, _, errs := run(t, tc.args...); code != 2 || !strings.Contains(errs, tc.err) {
			t.Errorf("%v: exit %d, %s; want 2 and %q", tc.args, code, errs, tc.err)
		}
	}
}
