package membership_test

import (
	"testing"

	"github.com/gpusched/gpusched/core/membership"
)

// TestResizeSequence walks one job through a series of allocations and checks
// the host list and a few environments, all written out by hand.
func TestResizeSequence(t *testing.T) {
	type envCheck struct {
		host  string
		local int
		want  map[string]string // a subset of the environment
	}
	steps := []struct {
		name     string
		alloc    string
		gen      int
		hostList string
		envs     []envCheck
	}{
		{name: "start on a and b", alloc: "a/0 a/1 a/2 a/3 b/0 b/1", gen: 1, hostList: "a:4\nb:2\n",
			envs: []envCheck{
				{"a", 0, map[string]string{"RANK": "0", "WORLD_SIZE": "6", "NODE_RANK": "0", "MASTER_ADDR": "a", "CUDA_VISIBLE_DEVICES": "0,1,2,3"}},
				{"b", 1, map[string]string{"RANK": "5", "LOCAL_RANK": "1", "NODE_RANK": "1", "NNODES": "2", "GPUSCHED_GENERATION": "1"}},
			}},
		{name: "grow onto new host c", alloc: "c/5 a/0 a/1 a/2 a/3 b/0 b/1 c/2", gen: 2, hostList: "a:4\nb:2\nc:2\n",
			envs: []envCheck{
				{"c", 1, map[string]string{"RANK": "7", "LOCAL_RANK": "1", "WORLD_SIZE": "8", "NODE_RANK": "2", "NNODES": "3",
					"MASTER_ADDR": "a", "CUDA_VISIBLE_DEVICES": "2,5", "GPUSCHED_GENERATION": "2"}},
				{"b", 0, map[string]string{"RANK": "4", "NODE_RANK": "1"}},
			}},
		{name: "shrink host a: a/3 moves into the rank a/1 left", alloc: "a/0 a/2 a/3 b/0 b/1 c/2 c/5", gen: 3, hostList: "a:3\nb:2\nc:2\n",
			envs: []envCheck{
				{"a", 1, map[string]string{"RANK": "1", "LOCAL_WORLD_SIZE": "3", "CUDA_VISIBLE_DEVICES": "0,3,2", "WORLD_SIZE": "7"}},
				{"b", 0, map[string]string{"RANK": "3", "NODE_RANK": "1"}},
				{"c", 0, map[string]string{"RANK": "5", "NODE_RANK": "2"}},
			}},
		{name: "same slots in another order: no change", alloc: "c/5 c/2 b/1 b/0 a/3 a/2 a/0", gen: 3, hostList: "a:3\nb:2\nc:2\n",
			envs: []envCheck{
				{"a", 1, map[string]string{"CUDA_VISIBLE_DEVICES": "0,3,2", "GPUSCHED_GENERATION": "3"}},
			}},
		{name: "master a leaves, d joins: b becomes master", alloc: "d/0 b/0 b/1 c/2 c/5", gen: 4, hostList: "b:2\nc:2\nd:1\n",
			envs: []envCheck{
				{"b", 0, map[string]string{"RANK": "0", "NODE_RANK": "0", "MASTER_ADDR": "b", "WORLD_SIZE": "5", "NNODES": "3"}},
				{"c", 1, map[string]string{"RANK": "3", "NODE_RANK": "1", "CUDA_VISIBLE_DEVICES": "2,5", "MASTER_ADDR": "b"}},
				{"d", 0, map[string]string{"RANK": "4", "NODE_RANK": "2", "CUDA_VISIBLE_DEVICES": "0", "GPUSCHED_GENERATION": "4"}},
			}},
		{name: "b grows, c loses c/2: c/5 moves to local rank 0", alloc: "b/0 b/1 b/7 c/5 d/0", gen: 5, hostList: "b:3\nc:1\nd:1\n",
			envs: []envCheck{
				{"b", 2, map[string]string{"RANK": "2", "CUDA_VISIBLE_DEVICES": "0,1,7"}},
				{"c", 0, map[string]string{"RANK": "3", "CUDA_VISIBLE_DEVICES": "5", "LOCAL_WORLD_SIZE": "1"}},
				{"d", 0, map[string]string{"RANK": "4", "GPUSCHED_GENERATION": "5"}},
			}},
	}
	var m membership.Membership
	for i, st := range steps {
		var err error
		if i == 0 {
			m, err = membership.New("j7", slots(t, st.alloc))
		} else {
			m, err = m.Next(slots(t, st.alloc))
		}
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if m.Generation != st.gen {
			t.Errorf("%s: generation %d, want %d", st.name, m.Generation, st.gen)
		}
		if got := m.HostList(); got != st.hostList {
			t.Errorf("%s: host list %q, want %q", st.name, got, st.hostList)
		}
		for _, c := range st.envs {
			env, err := m.Env(c.host, c.local, 29500)
			if err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			for k, v := range c.want {
				if env[k] != v {
					t.Errorf("%s: %s local rank %d: %s=%q, want %q", st.name, c.host, c.local, k, env[k], v)
				}
			}
		}
	}
}
