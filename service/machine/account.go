package machine

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Account is a Unix account of the node (one a replica runs as).
type Account struct {
	Name     string
	UID, GID uint32
	// Groups are the supplementary groups (an agent adds its user map's).
	Groups []uint32
	Home   string
}

// LookupAccount returns Unix account name, looked up by name or, when
// numeric is set (the user map names the account), as a numeric uid: a
// gpusched user named "1001" does not get uid 1001 by default. An unknown
// account is a user.UnknownUserError or user.UnknownUserIdError.
func LookupAccount(name string, numeric bool) (*Account, error) {
	u, err := lookupUser(name, numeric)
	if err != nil {
		if errors.As(err, new(user.UnknownUserError)) || errors.As(err, new(user.UnknownUserIdError)) {
			return nil, err
		}
		return nil, fmt.Errorf("Unix account %q: %w", name, err)
	}
	return accountOfUser(u)
}

// lookupUser is LookupAccount's look-up.
func lookupUser(name string, numeric bool) (*user.User, error) {
	u, err := user.Lookup(name)
	if _, nerr := strconv.ParseUint(name, 10, 32); err != nil && nerr == nil && numeric {
		return user.LookupId(name)
	}
	return u, err
}

// accountOfUser reads u's uid, gid and supplementary groups.
func accountOfUser(u *user.User) (*Account, error) {
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("Unix account %q: uid %q: %w", u.Username, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("Unix account %q: gid %q: %w", u.Username, u.Gid, err)
	}
	acct := &Account{Name: u.Username, UID: uint32(uid), GID: uint32(gid), Home: u.HomeDir}
	ids, err := u.GroupIds()
	if err != nil {
		return nil, fmt.Errorf("Unix account %q: groups: %w", u.Username, err)
	}
	for _, id := range ids {
		g, err := strconv.ParseUint(id, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("Unix account %q: group id %q: %w", u.Username, id, err)
		}
		if !slices.Contains(acct.Groups, uint32(g)) {
			acct.Groups = append(acct.Groups, uint32(g))
		}
	}
	return acct, nil
}

// LookupGroup returns the gid of group name (or numeric gid).
func LookupGroup(name string) (uint32, error) {
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

// Environ is acct's identity in a process's environment: HOME, USER and
// LOGNAME (none for nil).
func (acct *Account) Environ() []string {
	if acct == nil {
		return nil
	}
	return []string{"HOME=" + acct.Home, "USER=" + acct.Name, "LOGNAME=" + acct.Name}
}

// Own makes the files at paths belong to acct (nothing for nil).
func (acct *Account) Own(paths ...string) error {
	if acct == nil {
		return nil
	}
	for _, p := range paths {
		if err := os.Lchown(p, int(acct.UID), int(acct.GID)); err != nil {
			return fmt.Errorf("hand %s to account %s: %w", p, acct.Name, err)
		}
	}
	return nil
}

// SecretEnv reports whether the agent's own environment variable kv
// (NAME=value) may hold a credential: such variables are not passed on to
// replicas that run as another account.
func SecretEnv(kv string) bool {
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

// CheckReachable returns an error unless every directory above dir (and
// dir itself) lets other accounts pass through (search permission): the
// replicas' accounts must reach their directories under it.
func CheckReachable(dir string) error {
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
