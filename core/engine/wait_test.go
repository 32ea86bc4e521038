package engine

import "testing"

func TestWaitReason(t *testing.T) {
	for _, tc := range []struct {
		d    Decision
		want string
		ok   bool
	}{
		{Decision{"j", Blocked, reasonNoFit}, WaitBlocked, true},
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
