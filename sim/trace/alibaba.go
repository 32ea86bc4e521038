package trace

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/gpusched/gpusched/core/model"
)

// Headers of the Alibaba 2023 GPU cluster trace (alibaba/clusterdata,
// cluster-trace-gpu-v2023): the pod lists with times, the resampled pod
// list without them, and the node lists.
const (
	alibabaHeader       = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"
	alibabaNoTimes      = "name,cpu_milli,memory_mib,num_gpu,gpu_milli"
	alibabaNodesHeader  = "sn,cpu_milli,memory_mib,gpu,model"
	alibabaFullGPUMilli = 1000
)

// The columns of an Alibaba pod list, in order.
const (
	aliName = iota
	aliCPU
	aliMem
	aliGPUs
	aliGPUMilli
	aliSpec
	aliQoS
	aliPhase
	aliCreated
	aliDeleted
	aliScheduled
	aliColumns
)

// Reasons for which the alibaba reader leaves a task out (Trace.Skipped).
const (
	SkipShared   = "GPU-sharing (gpu_milli < 1000)"
	SkipCPUOnly  = "CPU-only (num_gpu 0)"
	SkipAnyTypes = "several GPU types allowed (gpu_spec with |; a job may be held to one type)"
)

// Bounds of the Alibaba columns: amounts whose bytes or millicores stay
// below 2^53, as config.ParseAmount's do.
const (
	maxCPUMilli = 1 << 40
	maxMemMiB   = 1 << 33
)

// readAlibaba reads an Alibaba 2023 pod list (header alibabaHeader): one
// task per line, a job of num_gpu GPUs in one replica that asks for
// cpu_milli and memory_mib. Tasks that share a GPU, CPU-only tasks and
// tasks that allow several GPU types are left out and counted by reason.
func readAlibaba(r io.Reader, name string) ([]model.JobSpec, map[string]int, error) {
	l := newLines(r, name)
	if err := alibabaHeaderLine(l); err != nil {
		return nil, nil, err
	}
	var (
		jobs    []model.JobSpec
		at      []int
		skipped map[string]int
		cols    [][]byte
		err     error
	)
	for l.next() {
		if cols, err = l.fields(',', aliColumns, cols); err != nil {
			return nil, nil, err
		}
		spec, why, err := alibabaTask(l, cols)
		if err != nil {
			return nil, nil, err
		}
		if why != "" {
			skipped = count(skipped, why)
			continue
		}
		jobs, at = append(jobs, spec), append(at, l.n)
	}
	if err := l.err(); err != nil {
		return nil, nil, err
	}
	if len(jobs) == 0 && len(skipped) > 0 {
		return nil, nil, &Error{File: name, Msg: "no jobs left: every task was left out (" + describeSkipped(skipped) + ")"}
	}
	jobs, err = finish(name, jobs, at)
	return jobs, skipped, err
}

// alibabaHeaderLine reads the header of a pod list, with a message that
// says what to do for the other files of the trace.
func alibabaHeaderLine(l *lines) error {
	if !l.next() {
		if err := l.err(); err != nil {
			return err
		}
		return &Error{File: l.name, Msg: fmt.Sprintf("missing header %q: the trace is empty", alibabaHeader)}
	}
	switch {
	case headerIs(l.text, alibabaHeader):
		return nil
	case headerIs(l.text, alibabaNoTimes):
		return l.fail("this Alibaba pod list has no creation, deletion or scheduled times " +
			"(openb_pod_list_multigpu50.csv and the other resampled lists): it cannot be replayed in time; " +
			"use openb_pod_list_default.csv or openb_pod_list_gpuspec33.csv")
	case headerIs(l.text, alibabaNodesHeader):
		return l.fail("this is an Alibaba node list, not a pod list: give it with --cluster, " +
			"and the pod list (openb_pod_list_*.csv) with --trace")
	}
	return l.fail("missing header: want %q, got %s", alibabaHeader, quote(l.text))
}

// count adds one to m[key], making m when it is nil.
func count(m map[string]int, key string) map[string]int {
	if m == nil {
		m = map[string]int{}
	}
	m[key]++
	return m
}

// describeSkipped writes skipped counts as "3 shares a GPU (...), 1 CPU
// only (...)", reasons sorted.
func describeSkipped(skipped map[string]int) string {
	var parts []string
	for _, why := range slices.Sorted(maps.Keys(skipped)) {
		parts = append(parts, fmt.Sprintf("%d %s", skipped[why], why))
	}
	return strings.Join(parts, ", ")
}

// alibabaTask converts the columns of one pod line into a job, or says why
// the task is left out. Submit is creation_time; the duration is
// deletion_time − scheduled_time, or deletion_time − creation_time for a
// task the trace never scheduled (an empty scheduled_time).
func alibabaTask(l *lines, cols [][]byte) (model.JobSpec, string, error) {
	var s model.JobSpec
	var err error
	if s.ID, err = l.nonEmpty("name", cols[aliName]); err != nil {
		return s, "", err
	}
	cpu, err := l.integer("cpu_milli", cols[aliCPU], 0, maxCPUMilli)
	if err != nil {
		return s, "", err
	}
	mem, err := l.integer("memory_mib", cols[aliMem], 0, maxMemMiB)
	if err != nil {
		return s, "", err
	}
	gpus, err := l.integer("num_gpu", cols[aliGPUs], 0, maxGPUs)
	if err != nil {
		return s, "", err
	}
	milli, err := l.integer("gpu_milli", cols[aliGPUMilli], 0, alibabaFullGPUMilli)
	if err != nil {
		return s, "", err
	}
	if s.Submit, s.Duration, err = alibabaTimes(l, cols); err != nil {
		return s, "", err
	}
	s.Group = l.intern(bytes.TrimSpace(cols[aliQoS]))
	switch {
	case gpus == 0:
		return s, SkipCPUOnly, nil
	case milli < alibabaFullGPUMilli:
		return s, SkipShared, nil
	}
	spec := strings.TrimSpace(string(cols[aliSpec]))
	if strings.Contains(spec, "|") {
		return s, SkipAnyTypes, nil
	}
	s.GPUType = strings.ToLower(spec)
	s.GPUs, s.MinGPUs, s.MaxGPUs, s.ReplicaGPUs = int(gpus), int(gpus), int(gpus), int(gpus)
	s.Requests = alibabaRequests(cpu, mem)
	return s, "", nil
}

// alibabaRequests is what one task asks for besides its GPUs: nil when
// nothing.
func alibabaRequests(cpuMilli, memMiB int64) model.Resources {
	var r model.Resources
	if cpuMilli > 0 {
		r = model.Resources{model.ResourceCPU: cpuMilli}
	}
	if memMiB > 0 {
		if r == nil {
			r = model.Resources{}
		}
		r[model.ResourceMemory] = memMiB << 20
	}
	return r
}

// alibabaTimes parses a pod line's times (whole seconds) and returns its
// submission time and duration.
func alibabaTimes(l *lines, cols [][]byte) (submit, duration model.Time, err error) {
	const maxS = int64(maxSeconds)
	created, err := l.integer("creation_time", cols[aliCreated], 0, maxS)
	if err != nil {
		return 0, 0, err
	}
	deleted, err := l.integer("deletion_time", cols[aliDeleted], 0, maxS)
	if err != nil {
		return 0, 0, err
	}
	start := created
	if sched := bytes.TrimSpace(cols[aliScheduled]); len(sched) > 0 {
		if start, err = l.integer("scheduled_time", sched, 0, maxS); err != nil {
			return 0, 0, err
		}
		if start < created {
			return 0, 0, l.fail("scheduled_time %d is before creation_time %d", start, created)
		}
	}
	if deleted < start {
		return 0, 0, l.fail("deletion_time %d is before the task started (%d)", deleted, start)
	}
	return model.Time(created) * model.Second, atLeastOneMilli(model.Time(deleted-start) * model.Second), nil
}
