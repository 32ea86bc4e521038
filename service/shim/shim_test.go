package shim

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/confine"
)

func TestParseShimArgs(t *testing.T) {
	tests := []struct {
		args []string
		err  string // "" for valid
	}{
		{[]string{"--dir", "/d", "--grace", "5", "--hello-fd", "3", "--", "sh", "-c", "x"}, ""},
		{[]string{"--dir", "/d", "--", "train", "--lr", "1"}, ""},
		{[]string{"--dir", "d", "--", "x"}, "absolute"},
		{[]string{"--", "x"}, "absolute"},
		{[]string{"--dir", "/d", "--"}, "no command"},
		{[]string{"--dir", "/d", "--grace", "soon", "--", "x"}, "invalid value"},
		{[]string{"--dir", "/d", "--hello-fd", "-1", "--", "x"}, "file descriptor"},
		{[]string{"--dir", "/d", "--bogus", "--", "x"}, "bogus"},
	}
	for _, tt := range tests {
		o, err := parseShimArgs(tt.args)
		if tt.err == "" {
			if err != nil {
				t.Errorf("%q: %v", tt.args, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%q: %+v, %v; want an error about %q", tt.args, o, err, tt.err)
		}
	}
	o, _ := parseShimArgs([]string{"--dir", "/d", "--grace", "5", "--", "train", "--lr", "1"})
	if o.dir != "/d" || o.grace != 5*time.Second || strings.Join(o.command, " ") != "train --lr 1" {
		t.Errorf("parsed %+v", o)
	}
	if err := Run([]string{"--", "x"}); err == nil || !strings.Contains(err.Error(), ErrUsage.Error()) {
		t.Errorf("Run with bad args: %v, want %v", err, ErrUsage)
	}
}

func TestShimCgroupNeedsItsRecord(t *testing.T) {
	dir := t.TempDir()
	_, err := parseShimArgs([]string{"--dir", dir, "--cgroup", "--", "true"})
	if err == nil || !strings.Contains(err.Error(), "no cgroup.json") {
		t.Errorf("--cgroup without cgroup.json: %v, want an error saying so", err)
	}
	if err := os.WriteFile(filepath.Join(dir, BoxFile), []byte(`{"version":"v1","paths":{"memory":"../x"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := parseShimArgs([]string{"--dir", dir, "--cgroup", "--", "true"}); err == nil ||
		!strings.Contains(err.Error(), "not a clean absolute path") {
		t.Errorf("--cgroup with a relative cgroup path: %v, want it refused", err)
	}
	box := confine.Box{Version: confine.V1, Paths: map[string]string{"memory": "/sys/fs/cgroup/memory/gpusched/n1/j1.1.0"}, MemoryBytes: 1 << 20}
	if err := box.Save(filepath.Join(dir, BoxFile)); err != nil {
		t.Fatal(err)
	}
	o, err := parseShimArgs([]string{"--dir", dir, "--cgroup", "--", "true"})
	if err != nil || o.box == nil || o.box.Paths["memory"] != box.Paths["memory"] || o.box.MemoryBytes != 1<<20 {
		t.Errorf("--cgroup: box %+v, %v; want the saved one", o.box, err)
	}
}

func TestParseCredential(t *testing.T) {
	for _, tc := range []struct {
		uid, gid int64
		groups   string
		want     *syscall.Credential
		err      bool
	}{
		{uid: -1, gid: -1, want: nil},
		{uid: 1000, gid: 1000, want: &syscall.Credential{Uid: 1000, Gid: 1000, Groups: []uint32{}}},
		{uid: 1000, gid: 100, groups: "100,27", want: &syscall.Credential{Uid: 1000, Gid: 100, Groups: []uint32{100, 27}}},
		{uid: 1000, gid: -1, err: true},
		{uid: -1, gid: 5, err: true},
		{uid: -1, gid: -1, groups: "5", err: true},
		{uid: 1 << 33, gid: 1, err: true},
		{uid: 1, gid: 1, groups: "a", err: true},
	} {
		got, err := parseCredential(tc.uid, tc.gid, tc.groups)
		if (err != nil) != tc.err {
			t.Errorf("parseCredential(%d, %d, %q): err %v, want error %v", tc.uid, tc.gid, tc.groups, err, tc.err)
			continue
		}
		if tc.err {
			continue
		}
		if (got == nil) != (tc.want == nil) || got != nil && (got.Uid != tc.want.Uid || got.Gid != tc.want.Gid ||
			!slices.Equal(got.Groups, tc.want.Groups)) {
			t.Errorf("parseCredential(%d, %d, %q) = %+v, want %+v", tc.uid, tc.gid, tc.groups, got, tc.want)
		}
	}
}

// TestCredentialArgs: the arguments of an account come back parsed.
func TestCredentialArgs(t *testing.T) {
	o, err := parseShimArgs(Args("/d", 5, 3, CredentialArgs(1001, 1002, []uint32{1002, 27}), []string{"id", "-un"}))
	if err != nil {
		t.Fatal(err)
	}
	if o.cred == nil || o.cred.Uid != 1001 || o.cred.Gid != 1002 || !slices.Equal(o.cred.Groups, []uint32{1002, 27}) ||
		!slices.Equal(o.command, []string{"id", "-un"}) {
		t.Errorf("round trip: %+v %+v", o, o.cred)
	}
	if o, err := parseShimArgs(Args("/d", 5, 3, nil, []string{"true"})); err != nil || o.cred != nil {
		t.Errorf("no account: %+v %v", o, err)
	}
}
