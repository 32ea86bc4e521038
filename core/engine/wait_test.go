package engine

import "testing"

func TestWaitReason(t *testing.T) {
	for _, tc := range []struct {
		d    Decision
		want string
		ok   bool
	}{
		{Decision{"j", Blocked, reasonNoFit}, WaitBlocked, true},
		{Decision{"j", Blocked, reasonShort("cpu")}, "waiting for free cpu: not enough free cpu on the nodes with free GPUs of a feasible type", true},
		{Decision{"j", Blocked, reasonShort("rdma/hca")}, "waiting for free rdma/hca: " + reasonShort("rdma/hca"), true},
		{Decision{"j", Unschedulable, "no GPU type"}, WaitNeverFits, true},
		{Decision{"j", Paused, "load state 3"}, WaitPausedPrefix + "load state 3", true},
		{Decision{"j", Placed, reasonPlaced}, "", false},
		{Decision{"j", Preempted, reasonPreempted}, "", false},
	} {
		if got, ok := WaitReason(tc.d); got != tc.want || ok != tc.ok {
			t.Errorf("WaitReason(%v) = %q, %v; want %q, %v", tc.d, got, ok, tc.want, tc.ok)
		}
	}
}

func TestShortResource(t *testing.T) {
	for reason, want := range map[string]string{
		reasonShort("cpu"):      "cpu",
		reasonShort("rdma/hca"): "rdma/hca",
		reasonNoFit:             "",
		"placed on free GPUs":   "",
	} {
		if got := ShortResource(reason); got != want {
			t.Errorf("ShortResource(%q) = %q, want %q", reason, got, want)
		}
	}
}
