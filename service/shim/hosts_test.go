package shim

import (
	"os"
	"path/filepath"
	"testing"
)

func TestHostFiles(t *testing.T) {
	tests := []struct {
		list, self            string
		hostfile, hosts, flag string
	}{
		{"a:4\nb:2\n", "a", "a slots=4\nb slots=2\n", "a:4\nb:2\n", "a:4,b:2"},
		{"a:4\n", "a", "localhost slots=4\n", "a:4\n", "localhost:4"},
		{"a:4\n", "b", "a slots=4\n", "a:4\n", "a:4"},
		{"a:4\r\n\n  junk\n:3\nb:x\nc:1", "z", "a slots=4\nc slots=1\n", "a:4\nc:1\n", "a:4,c:1"},
		{"", "a", "", "", ""},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		if err := WriteHostFiles(dir, tt.list, tt.self); err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{HostfileFile: tt.hostfile, HostsFile: tt.hosts} {
			if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
				t.Errorf("list %q: %s = %q, %v; want %q", tt.list, name, got, err, want)
			}
		}
		if got := HostsFlag(StaticHosts(tt.list, tt.self)); got != tt.flag {
			t.Errorf("list %q: GPUSCHED_HOSTS = %q, want %q", tt.list, got, tt.flag)
		}
		if fi, err := os.Stat(filepath.Join(dir, DiscoverFile)); err != nil || fi.Mode().Perm()&0o111 == 0 {
			t.Errorf("discovery script: %v, %v; want an executable", fi, err)
		}
	}
}
