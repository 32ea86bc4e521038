package config

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// UserMap is an admin's mapping of gpusched users to Unix accounts on a
// node (`gpusched agent --user-map FILE`, docs/AGENT.md). A user it does
// not name runs as the account of the same name.
//
//	users:
//	  alice: {account: asmith, groups: [gpu, datasets]}
//	  ops:   {account: root}   # root only when mapped explicitly
type UserMap struct {
	// Users maps a gpusched user name to its account.
	Users map[string]UserAccount `json:"users"`
	// Default is the account of users Users does not name, and of jobs
	// without an owner; nil: the account named like the user (an owner
	// is then required).
	Default *UserAccount `json:"default,omitempty"`
}

// UserAccount is the Unix account a gpusched user's replicas run as.
type UserAccount struct {
	// Account is the Unix user name (or numeric uid); empty: the
	// gpusched user's own name.
	Account string `json:"account,omitempty"`
	// Groups are extra groups (names or numeric gids) on top of the
	// account's own primary and supplementary groups.
	Groups []string `json:"groups,omitempty"`
}

// LoadUserMap reads and checks the user map in file path.
func LoadUserMap(path string) (*UserMap, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("user map: %w", err)
	}
	return DecodeUserMap(path, data)
}

// DecodeUserMap decodes a user map from YAML (or JSON) and checks it.
// Errors name the file (name) and the field, e.g. `users.yaml:
// users.alice.account: "a b": want a Unix account name`.
func DecodeUserMap(name string, data []byte) (*UserMap, error) {
	m, err := decodeStrict[UserMap](name, data)
	if err != nil {
		return nil, err
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// check returns the first invalid entry of m, by user name.
func (m *UserMap) check() error {
	for _, user := range slices.Sorted(maps.Keys(m.Users)) {
		if !unixName(user) {
			return fmt.Errorf("users.%s: want a user name (letters, digits, '.', '_', '-', '@')", user)
		}
		if err := m.Users[user].check("users." + user); err != nil {
			return err
		}
	}
	if m.Default != nil {
		return m.Default.check("default")
	}
	return nil
}

// check returns a's first invalid field; field names a.
func (a UserAccount) check(field string) error {
	if a.Account != "" && !unixName(a.Account) {
		return fmt.Errorf("%s.account: %q: want a Unix account name", field, a.Account)
	}
	for i, g := range a.Groups {
		if !unixName(g) {
			return fmt.Errorf("%s.groups[%d]: %q: want a Unix group name", field, i, g)
		}
	}
	return nil
}

// Lookup returns the account gpusched user user runs as and its extra
// groups: its entry in Users, else Default, else the account named like
// user ("" for no user). explicit is true when the map names the account
// (the only way to run as root).
func (m *UserMap) Lookup(user string) (account string, groups []string, explicit bool) {
	if m == nil {
		return user, nil, false
	}
	a, ok := m.Users[user]
	if !ok && m.Default != nil {
		a, ok = *m.Default, true
	}
	if !ok || a.Account == "" {
		return user, a.Groups, false
	}
	return a.Account, a.Groups, true
}

// unixName reports whether s can name a Unix user or group: 1 to 64
// characters, letters, digits, '.', '_', '-', '@' and '$', not starting
// with '-'.
func unixName(s string) bool {
	if s == "" || len(s) > 64 || s[0] == '-' || s == "." || s == ".." {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-@$", r))
	}) < 0
}
