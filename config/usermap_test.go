package config

import (
	"slices"
	"strings"
	"testing"
)

func TestDecodeUserMap(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     map[string]UserAccount
		err      string // a part of the error; "" for none
	}{
		{name: "empty", in: "", want: nil},
		{name: "no users", in: "users: {}\n", want: map[string]UserAccount{}},
		{name: "account and groups", in: "users:\n  alice: {account: asmith, groups: [gpu, '1001']}\n",
			want: map[string]UserAccount{"alice": {Account: "asmith", Groups: []string{"gpu", "1001"}}}},
		{name: "groups only", in: "users:\n  bob:\n    groups: [data]\n",
			want: map[string]UserAccount{"bob": {Groups: []string{"data"}}}},
		{name: "root explicit", in: `{"users":{"ops":{"account":"root"}}}`,
			want: map[string]UserAccount{"ops": {Account: "root"}}},
		{name: "default", in: "default: {account: root}\n", want: nil},
		{name: "bad default", in: "default: {groups: ['a b']}\n", err: `m.yaml: default.groups[0]: "a b"`},
		{name: "unknown top field", in: "user:\n  alice: {}\n", err: `m.yaml: top level: unknown field "user"`},
		{name: "unknown account field", in: "users:\n  alice: {acount: x}\n", err: `m.yaml: users.alice: unknown field "acount"`},
		{name: "bad account", in: "users:\n  alice: {account: 'a b'}\n", err: `m.yaml: users.alice.account: "a b"`},
		{name: "account with slash", in: "users:\n  alice: {account: '../x'}\n", err: "users.alice.account"},
		{name: "bad group", in: "users:\n  alice: {groups: [ok, 'x:y']}\n", err: `m.yaml: users.alice.groups[1]: "x:y"`},
		{name: "groups not a list", in: "users:\n  alice: {groups: gpu}\n", err: "users.alice.groups"},
		{name: "bad user", in: "users:\n  'a/b': {}\n", err: "users.a/b: want a user name"},
		{name: "duplicate", in: "users:\n  alice: {}\n  alice: {}\n", err: "m.yaml"},
		{name: "not a mapping", in: "- alice\n", err: "m.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := DecodeUserMap("m.yaml", []byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Users) != len(tc.want) {
				t.Fatalf("users = %v, want %v", m.Users, tc.want)
			}
			for k, w := range tc.want {
				if g := m.Users[k]; g.Account != w.Account || !slices.Equal(g.Groups, w.Groups) {
					t.Errorf("users[%s] = %+v, want %+v", k, g, w)
				}
			}
		})
	}
}

func TestUserMapLookup(t *testing.T) {
	m := &UserMap{Users: map[string]UserAccount{"alice": {Account: "asmith", Groups: []string{"gpu"}}, "bob": {}}}
	for _, tc := range []struct {
		user, account string
		groups        []string
		explicit      bool
	}{
		{"alice", "asmith", []string{"gpu"}, true},
		{"bob", "bob", nil, false},
		{"carol", "carol", nil, false},
	} {
		a, g, e := m.Lookup(tc.user)
		if a != tc.account || !slices.Equal(g, tc.groups) || e != tc.explicit {
			t.Errorf("Lookup(%s) = %s %v %v, want %s %v %v", tc.user, a, g, e, tc.account, tc.groups, tc.explicit)
		}
	}
	m.Default = &UserAccount{Account: "root"}
	for _, u := range []string{"carol", ""} {
		if a, _, e := m.Lookup(u); a != "root" || !e {
			t.Errorf("with default: Lookup(%q) = %s %v, want root true", u, a, e)
		}
	}
	m.Default = &UserAccount{Groups: []string{"gpu"}}
	if a, g, e := m.Lookup("carol"); a != "carol" || !slices.Equal(g, []string{"gpu"}) || e {
		t.Errorf("default groups: Lookup(carol) = %s %v %v", a, g, e)
	}
	var none *UserMap
	if a, _, e := none.Lookup("x"); a != "x" || e {
		t.Errorf("nil map: Lookup = %s %v", a, e)
	}
}

func FuzzDecodeUserMap(f *testing.F) {
	f.Add([]byte("users:\n  alice: {account: asmith, groups: [gpu]}\n"))
	f.Add([]byte(`{"users":{"ops":{"account":"root"}}}`))
	f.Add([]byte("users:\n  'a b': {groups: [x]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeUserMap("fuzz.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml: ") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		for user, a := range m.Users {
			acct, groups, explicit := m.Lookup(user)
			if explicit != (a.Account != "") || !unixName(acct) || !unixName(user) {
				t.Fatalf("accepted %q → %+v", user, a)
			}
			for _, g := range groups {
				if !unixName(g) {
					t.Fatalf("accepted group %q", g)
				}
			}
		}
	})
}
