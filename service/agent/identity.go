package agent

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

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

// account is the Unix account a replica runs as.
type account struct {
	name     string
	uid, gid uint32
	groups   []uint32 // supplementary groups, the extra ones of the user map included
	home     string
}

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
	u, err := lookupUser(name, explicit)
	if err != nil {
		if errors.As(err, new(user.UnknownUserError)) || errors.As(err, new(user.UnknownUserIdError)) {
			return nil, fmt.Errorf("no Unix account %q on node %s", name, a.cfg.Name)
		}
		return nil, fmt.Errorf("Unix account %q: %w", name, err)
	}
	acct, err := accountOfUser(u)
	if err != nil {
		return nil, err
	}
	if acct.uid == 0 && !explicit {
		return nil, fmt.Errorf("owner %q has Unix account %q with uid 0: jobs run as root only when the user map (--user-map) says so",
			owner, name)
	}
	if int(acct.uid) == os.Geteuid() && len(extra) == 0 {
		return nil, nil // mapped to the agent's own account (root, explicitly): as RunAsAgent
	}
	for _, g := range extra {
		gid, err := lookupGroup(g)
		if err != nil {
			return nil, fmt.Errorf("group %q of user %q (user map): %w", g, owner, err)
		}
		if !slices.Contains(acct.groups, gid) {
			acct.groups = append(acct.groups, gid)
		}
	}
	return acct, nil
}

// lookupUser looks account name up by name, or, when numeric is set (the
// user map names the account), as a numeric uid: a gpusched user named
// "1001" does not get uid 1001 by default.
func lookupUser(name string, numeric bool) (*user.User, error) {
	u, err := user.Lookup(name)
	if _, nerr := strconv.ParseUint(name, 10, 32); err != nil && nerr == nil && numeric {
		return user.LookupId(name)
	}
	return u, err
}

// accountOfUser reads u's uid, gid and supplementary groups.
func accountOfUser(u *user.User) (*account, error) {
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("Unix account %q: uid %q: %w", u.Username, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("Unix account %q: gid %q: %w", u.Username, u.Gid, err)
	}
	acct := &account{name: u.Username, uid: uint32(uid), gid: uint32(gid), home: u.HomeDir}
	ids, err := u.GroupIds()
	if err != nil {
		return nil, fmt.Errorf("Unix account %q: groups: %w", u.Username, err)
	}
	for _, id := range ids {
		g, err := strconv.ParseUint(id, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("Unix account %q: group id %q: %w", u.Username, id, err)
		}
		if !slices.Contains(acct.groups, uint32(g)) {
			acct.groups = append(acct.groups, uint32(g))
		}
	}
	return acct, nil
}

// lookupGroup returns the gid of group name (or numeric gid).
func lookupGroup(name string) (uint32, error) {
	g, err := user.LookupGroup(name)
	if err != nil {
		if _, nerr := strconv.ParseUint(name, 10, 32); nerr != nil {
			return 0, err
		}
		if g, err = user.LookupGroupId(name); err != nil {
			return 0, err
		}
	}
	gid, err := strconv.ParseUint(g.Gid, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("gid %q: %w", g.Gid, err)
	}
	return uint32(gid), nil
}

// shimArgs are the shim's arguments that start the replica's command as
// acct (none for nil).
func (acct *account) shimArgs() []string {
	if acct == nil {
		return nil
	}
	return shim.CredentialArgs(acct.uid, acct.gid, acct.groups)
}

// environ is acct's identity in a replica's environment: HOME, USER and
// LOGNAME (none for nil).
func (acct *account) environ() []string {
	if acct == nil {
		return nil
	}
	return []string{"HOME=" + acct.home, "USER=" + acct.name, "LOGNAME=" + acct.name}
}

// own makes the files at paths belong to acct (nothing for nil).
func (acct *account) own(paths ...string) error {
	if acct == nil {
		return nil
	}
	for _, p := range paths {
		if err := os.Lchown(p, int(acct.uid), int(acct.gid)); err != nil {
			return fmt.Errorf("hand %s to account %s: %w", p, acct.name, err)
		}
	}
	return nil
}

// secretEnv reports whether the agent's own environment variable kv
// (NAME=value) may hold a credential: such variables are not passed on to
// replicas that run as another account.
func secretEnv(kv string) bool {
	name, _, _ := strings.Cut(kv, "=")
	name = strings.ToUpper(name)
	for _, w := range []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "API_KEY", "PRIVATE_KEY",
		"SSH_AUTH_SOCK", "GPUSCHED_CONFIG", "REDFISH"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// checkReachable returns an error unless every directory above dir (and
// dir itself) lets other accounts pass through (search permission): the
// replicas' accounts must reach their directories under it.
func checkReachable(dir string) error {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("data directory %s: %w", dir, err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("data directory %s: %s (mode %04o) does not let other accounts through, and replicas "+
				"run as their owners' accounts must reach their directories: choose a --data such as /var/lib/gpusched/agent",
				dir, d, fi.Mode().Perm())
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// logRunAs says, once at start, whose accounts replicas run as.
func (a *Agent) logRunAs() {
	if a.cfg.RunAs == RunAsOwner {
		a.log.Info("replicas run as their job owners' Unix accounts", "user_map", a.cfg.UserMap != nil)
		if err := checkReachable(a.cfg.DataDir); err != nil {
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
