package confine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	devcfg "github.com/opencontainers/cgroups/devices/config"
)

// ruleStrings writes rules as the v1 devices files take them
// ("c 195:1 rwm"), with "deny " before denials.
func ruleStrings(rules []*devcfg.Rule) []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = r.CgroupString()
		if !r.Allow {
			out[i] = "deny " + out[i]
		}
	}
	return out
}

func TestDeviceRules(t *testing.T) {
	base := ruleStrings(baseRules())
	if base[0] != "deny a *:* rwm" {
		t.Fatalf("the base rules start with %q, want a denial of everything", base[0])
	}
	for _, tc := range []struct {
		name   string
		gpus   int // fake nvidiaN nodes, with nvidiactl
		give   []int
		want   []string // beyond the base rules
		absent []string
	}{
		{name: "no NVIDIA devices", want: nil},
		{name: "GPU 1 of 4", gpus: 4, give: []int{1}, want: []string{"c 195:255 rwm", "c 195:1 rwm"},
			absent: []string{"c 195:0 rwm", "c 195:2 rwm", "c 195:3 rwm", "c 195:* rwm"}},
		{name: "GPUs 0 and 3 of 4", gpus: 4, give: []int{0, 3}, want: []string{"c 195:255 rwm", "c 195:0 rwm", "c 195:3 rwm"},
			absent: []string{"c 195:1 rwm", "c 195:2 rwm"}},
		{name: "a GPU the node lacks", gpus: 2, give: []int{5}, want: []string{"c 195:255 rwm"}},
		{name: "no GPU given", gpus: 2, want: []string{"c 195:255 rwm"}, absent: []string{"c 195:0 rwm", "c 195:1 rwm"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.gpus > 0 {
				dir = fakeGPUs(t, tc.gpus)
			}
			rules, err := DeviceRules(dir, tc.give)
			if err != nil {
				t.Fatal(err)
			}
			got := ruleStrings(rules)
			if strings.Join(got[:len(base)], "\n") != strings.Join(base, "\n") {
				t.Errorf("rules do not start with the base rules:\n%s", strings.Join(got, "\n"))
			}
			if strings.Join(got[len(base):], "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("rules beyond the base = %q, want %q", got[len(base):], tc.want)
			}
			for _, a := range tc.absent {
				for _, g := range got {
					if g == a {
						t.Errorf("rule %q present", a)
					}
				}
			}
		})
	}
}

func TestDeviceRulesRefuseNonDevice(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "nvidia0"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := DeviceRules(dir, []int{0}); err == nil || !strings.Contains(err.Error(), "not a character device") {
		t.Errorf("a plain file named nvidia0: %v, want an error saying it is no character device", err)
	}
}

// FuzzLoad feeds Load arbitrary cgroup records: it never panics, and a
// record it accepts names a cgroup version and only clean absolute paths.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{"version":"v1","paths":{"memory":"/sys/fs/cgroup/memory/gpusched/n1/j1.1.0"},"memory_bytes":268435456}`))
	f.Add([]byte(`{"version":"v2","paths":{"":"/sys/fs/cgroup/gpusched/n1/j1.1.0"}}`))
	f.Add([]byte(`{"version":"v3","paths":{}}`))
	f.Add([]byte(`{"version":"v2","paths":{"":"/sys/fs/cgroup/../etc"}}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "cgroup.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		b, found, err := Load(path)
		if err != nil || !found {
			return
		}
		if b.Version != V1 && b.Version != V2 {
			t.Fatalf("accepted version %v", b.Version)
		}
		for _, p := range b.Paths {
			if !filepath.IsAbs(p) || filepath.Clean(p) != p {
				t.Fatalf("accepted path %q", p)
			}
		}
	})
}
