package agent

import (
	"github.com/gpusched/gpusched/service/shim"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/config"
)

func TestAccountOf(t *testing.T) {
	if _, err := lookupUser("nobody", false); err != nil {
		t.Skip("no account nobody on this machine")
	}
	nogroup, err := lookupGroup("nogroup")
	if err != nil {
		t.Skip("no group nogroup on this machine")
	}
	m := &config.UserMap{Users: map[string]config.UserAccount{
		"ops":   {Account: "root"},
		"guest": {Account: "nobody", Groups: []string{"nogroup"}},
		"ghost": {Account: "nobody", Groups: []string{"no-such-group-x"}},
	}}
	for _, tc := range []struct {
		name, owner string
		runAs       RunAs
		umap        *config.UserMap
		uid         int    // -1: no account (the agent's own)
		err         string // part of the error
	}{
		{name: "as the agent", owner: "alice", runAs: RunAsAgent, uid: -1},
		{name: "no owner", owner: "", runAs: RunAsOwner, err: "has no owner"},
		{name: "no account", owner: "no-such-user-x", runAs: RunAsOwner, err: `no Unix account "no-such-user-x" on node n3`},
		{name: "root by name", owner: "root", runAs: RunAsOwner, err: "only when the user map"},
		{name: "uid by default", owner: "0", runAs: RunAsOwner, err: `no Unix account "0" on node n3`},
		{name: "uid mapped", owner: "x", runAs: RunAsOwner,
			umap: &config.UserMap{Users: map[string]config.UserAccount{"x": {Account: "65534"}}}, uid: 65534},
		{name: "same name", owner: "nobody", runAs: RunAsOwner, uid: 65534},
		{name: "mapped with groups", owner: "guest", runAs: RunAsOwner, umap: m, uid: 65534},
		{name: "unknown group", owner: "ghost", runAs: RunAsOwner, umap: m, err: `group "no-such-group-x" of user "ghost"`},
		{name: "mapped account missing", owner: "x", runAs: RunAsOwner,
			umap: &config.UserMap{Users: map[string]config.UserAccount{"x": {Account: "no-such-user-y"}}}, err: `no Unix account "no-such-user-y"`},
		{name: "root explicitly", owner: "ops", runAs: RunAsOwner, umap: m, uid: 0},
		{name: "default root", owner: "", runAs: RunAsOwner, umap: &config.UserMap{Default: &config.UserAccount{Account: "root"}}, uid: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Agent{cfg: Config{Name: "n3", RunAs: tc.runAs, UserMap: tc.umap}}
			acct, err := a.accountOf(tc.owner)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tc.uid
			if want == os.Geteuid() {
				want = -1 // the agent's own account: started as the agent
			}
			switch {
			case want < 0 && acct != nil:
				t.Fatalf("account = %+v, want the agent's own", acct)
			case want >= 0 && (acct == nil || int(acct.uid) != want):
				t.Fatalf("account = %+v, want uid %d", acct, want)
			}
			if tc.owner == "guest" && !slices.Contains(acct.groups, nogroup) {
				t.Errorf("groups %v lack nogroup %d", acct.groups, nogroup)
			}
		})
	}
}

func TestShimArgsOfAccount(t *testing.T) {
	acct := &account{name: "alice", uid: 1001, gid: 1002, groups: []uint32{1002, 27}, home: "/home/alice"}
	if got, want := acct.shimArgs(), shim.CredentialArgs(1001, 1002, []uint32{1002, 27}); !slices.Equal(got, want) {
		t.Errorf("shimArgs = %v, want %v", got, want)
	}
	var none *account
	if got := none.shimArgs(); got != nil {
		t.Errorf("no account: %v", got)
	}
	if got := acct.environ(); !slices.Equal(got, []string{"HOME=/home/alice", "USER=alice", "LOGNAME=alice"}) {
		t.Errorf("environ = %v", got)
	}
}

func TestSecretEnv(t *testing.T) {
	for kv, want := range map[string]bool{
		"GPUSCHED_TOKEN=x": true, "GPUSCHED_JOIN_TOKEN=x": true, "HF_TOKEN=x": true, "AWS_SECRET_ACCESS_KEY=x": true,
		"DB_PASSWORD=x": true, "SSH_AUTH_SOCK=/tmp/s": true, "GPUSCHED_CONFIG=/root/c.yaml": true,
		"GPUSCHED_REDFISH_PASSWORD=x": true, "PATH=/bin": false, "LANG=C": false, "CUDA_HOME=/usr/local/cuda": false,
	} {
		if secretEnv(kv) != want {
			t.Errorf("secretEnv(%s) = %v, want %v", kv, !want, want)
		}
	}
}
