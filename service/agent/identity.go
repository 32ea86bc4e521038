package agent

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strconv"

	"github.com/gpusched/gpusched/service/machine"
	"github.com/gpusched/gpusched/service/shim"
)

// RunAs says whose Unix account an agent starts replicas as
// (docs/SECURITY.md, "On the nodes").
type RunAs int

const (
	// RunAsAgent starts every replica as the agent's own account: the
	// default of Config, `gpusched dev` without --auth (one person's
	// workstation) and any agent not running as root.
	RunAsAgent RunAs = iota
	// RunAsOwner starts every replica as its job owner's Unix account
	// (Config.UserMap, else the account named like the owner), with that
	// account's groups and home; it needs root. A job whose owner has no
	// account on the node is not started there, and never as root unless
	// the user map says so.
	RunAsOwner
)

// accountOf returns the account replicas of owner run as: nil when the
// agent runs them as itself (RunAsAgent). The errors are why the replica
// is not started, e.g. `no Unix account "alice" on node n3`.
func (a *Agent) accountOf(owner string) (*account, error) {
	if a.cfg.RunAs != RunAsOwner {
		return nil, nil
	}
	name, extra, explicit := a.cfg.UserMap.Lookup(owner)
	if name == "" {
		return nil, errors.New("the job has no owner: this agent runs jobs only as their owners' Unix accounts")
	}
	acct, err := machine.LookupAccount(name, explicit)
	if err != nil {
		if errors.As(err, new(user.UnknownUserError)) || errors.As(err, new(user.UnknownUserIdError)) {
			return nil, fmt.Errorf("no Unix account %q on node %s", name, a.cfg.Name)
		}
		return nil, err
	}
	if acct.UID == 0 && !explicit {
		return nil, fmt.Errorf("owner %q has Unix account %q with uid 0: jobs run as root only when the user map (--user-map) says so",
			owner, name)
	}
	if int(acct.UID) == os.Geteuid() && len(extra) == 0 {
		return nil, nil // mapped to the agent's own account (root, explicitly): as RunAsAgent
	}
	for _, g := range extra {
		gid, err := machine.LookupGroup(g)
		if err != nil {
			return nil, fmt.Errorf("group %q of user %q (user map): %w", g, owner, err)
		}
		if !slices.Contains(acct.Groups, gid) {
			acct.Groups = append(acct.Groups, gid)
		}
	}
	return acct, nil
}

// account is the Unix account a replica runs as.
type account = machine.Account

// shimArgs are the shim's arguments that start the replica's command as
// acct (none for nil).
func shimArgs(acct *account) []string {
	if acct == nil {
		return nil
	}
	return shim.CredentialArgs(acct.UID, acct.GID, acct.Groups)
}

// logRunAs says, once at start, whose accounts replicas run as.
func (a *Agent) logRunAs() {
	if a.cfg.RunAs == RunAsOwner {
		a.log.Info("replicas run as their job owners' Unix accounts", "user_map", a.cfg.UserMap != nil)
		if err := machine.CheckReachable(a.cfg.DataDir); err != nil {
			a.log.Warn("replicas running as other accounts cannot start", "err", err)
		}
		return
	}
	name := strconv.Itoa(os.Geteuid())
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	a.log.Info("replicas run as the agent's own account", "account", name, "uid", os.Geteuid())
}
