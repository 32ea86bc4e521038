package kubebed

import (
	"strings"
	"testing"
)

func TestParseBed(t *testing.T) {
	full := "SERVER=https://127.0.0.1:1\nKUBECONFIG=/d/kubeconfig\nKUBECTL=/c/kubectl\n" +
		"CA=/d/pki/ca.crt\nCLIENT_CERT=/d/pki/admin.crt\nCLIENT_KEY=/d/pki/admin.key\n"
	for _, tc := range []struct {
		name, in, wantErr string
	}{
		{"complete", full + "VOLCANO=1\n\nK8S_VERSION=v1.36.1\n", ""},
		{"value with =", full + "X=a=b\n", ""},
		{"no equals", full + "junk\n", `line 7: "junk" is not KEY=VALUE`},
		{"empty key", "=v\n" + full, `line 1: "=v" is not KEY=VALUE`},
		{"missing key", strings.Replace(full, "KUBECTL=/c/kubectl\n", "", 1), "no KUBECTL"},
		{"empty", "", "no SERVER"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kv, err := parseBed(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if kv["SERVER"] != "https://127.0.0.1:1" || kv["CLIENT_KEY"] != "/d/pki/admin.key" {
				t.Errorf("parsed %v", kv)
			}
			if tc.name == "value with =" && kv["X"] != "a=b" {
				t.Errorf("X = %q, want a=b", kv["X"])
			}
		})
	}
}

func FuzzParseBed(f *testing.F) {
	f.Add("SERVER=https://127.0.0.1:1\nKUBECONFIG=k\nKUBECTL=c\nCA=a\nCLIENT_CERT=b\nCLIENT_KEY=d\n")
	f.Add("=\n\n==")
	f.Fuzz(func(t *testing.T, in string) {
		kv, err := parseBed(strings.NewReader(in))
		if err == nil && kv["SERVER"] == "" {
			t.Fatalf("accepted %q without SERVER", in)
		}
	})
}
