package agent

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/service/machine"
	"github.com/gpusched/gpusched/service/shim"
)

func TestAccountOf(t *testing.T) {
	if _, err := machine.LookupAccount("nobody", false); err != nil {
		t.Skip("no account nobody on this machine")
	}
	nogroup, err := machine.LookupGroup("nogroup")
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
			case want >= 0 && (acct == nil || int(acct.UID) != want):
				t.Fatalf("account = %+v, want uid %d", acct, want)
			}
			if tc.owner == "guest" && !slices.Contains(acct.Groups, nogroup) {
				t.Errorf("groups %v lack nogroup %d", acct.Groups, nogroup)
			}
		})
	}
}

func TestShimArgsOfAccount(t *testing.T) {
	acct := &account{Name: "alice", UID: 1001, GID: 1002, Groups: []uint32{1002, 27}, Home: "/home/alice"}
	if got, want := shimArgs(acct), shim.CredentialArgs(1001, 1002, []uint32{1002, 27}); !slices.Equal(got, want) {
		t.Errorf("shimArgs = %v, want %v", got, want)
	}
	var none *account
	if got := shimArgs(none); got != nil {
		t.Errorf("no account: %v", got)
	}
	if got := acct.Environ(); !slices.Equal(got, []string{"HOME=/home/alice", "USER=alice", "LOGNAME=alice"}) {
		t.Errorf("environ = %v", got)
	}
}
