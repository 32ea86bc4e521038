package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestCheckAddr(t *testing.T) {
	lookup := func(_ context.Context, host string) ([]string, error) {
		if host == "gpu7" {
			return []string{"10.0.0.7"}, nil
		}
		return nil, errors.New("no such host")
	}
	for _, tc := range []struct {
		addr, want string
	}{
		{"gpu7", ""},
		{"10.0.0.9", ""},
		{"127.0.0.1", ""},
		{"n0", `node address "n0" does not resolve (no such host)`},
	} {
		err := checkAddr(context.Background(), lookup, tc.addr)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("checkAddr(%q) = %v, want nil", tc.addr, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--addr")):
			t.Errorf("checkAddr(%q) = %v, want an error with %q and the --addr advice", tc.addr, err, tc.want)
		}
	}
}
