package membership_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/gpusched/gpusched/core/membership"
)

// twoHosts is job "j7" generation 3 on a:[0 3 2] and b:[5].
func twoHosts() membership.Membership {
	return membership.Membership{Job: "j7", Generation: 3, Hosts: []membership.Host{
		{Name: "a", GPUs: []int{0, 3, 2}}, {Name: "b", GPUs: []int{5}},
	}}
}

func TestEnv(t *testing.T) {
	common := func(e membership.Env) membership.Env {
		e["MASTER_ADDR"], e["MASTER_PORT"], e["WORLD_SIZE"], e["NNODES"] = "a", "29500", "4", "2"
		e["GPUSCHED_JOB_ID"], e["GPUSCHED_GENERATION"], e["CUDA_DEVICE_ORDER"] = "j7", "3", "PCI_BUS_ID"
		return e
	}
	tests := []struct {
		host  string
		local int
		want  membership.Env
	}{
		{"a", 0, common(membership.Env{"RANK": "0", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "3", "NODE_RANK": "0", "CUDA_VISIBLE_DEVICES": "0,3,2"})},
		{"a", 2, common(membership.Env{"RANK": "2", "LOCAL_RANK": "2", "LOCAL_WORLD_SIZE": "3", "NODE_RANK": "0", "CUDA_VISIBLE_DEVICES": "0,3,2"})},
		{"b", 0, common(membership.Env{"RANK": "3", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1", "NODE_RANK": "1", "CUDA_VISIBLE_DEVICES": "5"})},
	}
	m := twoHosts()
	for _, tt := range tests {
		got, err := m.Env(tt.host, tt.local, 29500)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Env(%s, %d) =\n%v\nwant\n%v", tt.host, tt.local, got.Pairs(), tt.want.Pairs())
		}
	}
}

func TestNodeEnvAndArgs(t *testing.T) {
	m := twoHosts()
	got, err := m.NodeEnv("b", 1234)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=5", "GPUSCHED_GENERATION=3", "GPUSCHED_JOB_ID=j7",
		"LOCAL_WORLD_SIZE=1", "MASTER_ADDR=a", "MASTER_PORT=1234", "NNODES=2", "NODE_RANK=1",
		"PET_MASTER_ADDR=a", "PET_MASTER_PORT=1234", "PET_NNODES=2", "PET_NODE_RANK=1", "PET_NPROC_PER_NODE=1",
		"WORLD_SIZE=4",
	}
	if !reflect.DeepEqual(got.Pairs(), want) {
		t.Errorf("NodeEnv = %v\nwant %v", got.Pairs(), want)
	}
	args, err := m.TorchrunArgs("a", 1234)
	if err != nil {
		t.Fatal(err)
	}
	wantArgs := []string{"--nnodes=2", "--node_rank=0", "--nproc_per_node=3", "--master_addr=a", "--master_port=1234"}
	if !reflect.DeepEqual(args, wantArgs) {
		t.Errorf("TorchrunArgs = %v, want %v", args, wantArgs)
	}
}

func TestEnvErrors(t *testing.T) {
	tests := []struct {
		name  string
		m     membership.Membership
		host  string
		local int
		port  int
		err   error
	}{
		{"unknown host", twoHosts(), "c", 0, 29500, membership.ErrUnknownHost},
		{"negative local rank", twoHosts(), "a", -1, 29500, membership.ErrLocalRank},
		{"local rank too high", twoHosts(), "b", 1, 29500, membership.ErrLocalRank},
		{"port 0", twoHosts(), "a", 0, 0, membership.ErrBadPort},
		{"port too high", twoHosts(), "a", 0, 65536, membership.ErrBadPort},
		{"invalid membership", membership.Membership{Job: "j"}, "a", 0, 29500, membership.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.m.Env(tt.host, tt.local, tt.port); !errors.Is(err, tt.err) {
				t.Errorf("Env: err = %v, want %v", err, tt.err)
			}
			if tt.err == membership.ErrLocalRank {
				return
			}
			if _, err := tt.m.NodeEnv(tt.host, tt.port); !errors.Is(err, tt.err) {
				t.Errorf("NodeEnv: err = %v, want %v", err, tt.err)
			}
			if _, err := tt.m.TorchrunArgs(tt.host, tt.port); !errors.Is(err, tt.err) {
				t.Errorf("TorchrunArgs: err = %v, want %v", err, tt.err)
			}
		})
	}
}
