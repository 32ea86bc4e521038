// Package kube is gpusched's Kubernetes mode (`gpusched kube`): the pure
// core scheduling the pods that name it (spec.schedulerName) on a real
// API server, beside kube-scheduler.
//
// Informers (client-go, with field selectors and transforms that keep
// only what scheduling needs) maintain the world: the nodes with
// nvidia.com/gpu (GPU type from NVIDIA's nvidia.com/gpu.product label,
// ProductType), gpusched's pending and bound pods, other schedulers'
// bound pods (whose GPUs are not free), batch/v1 Jobs and the pod groups
// of every API served. Pods form jobs by job key: their owning Volcano
// Job, else the pod group they name (groups.go: Kubernetes' own PodGroup,
// scheduler-plugins' or Volcano's, Kueue's pod group, else their JobSet;
// the group sets the gang size, and groupstatus.go keeps its status as
// its own scheduler would), else their owning batch/v1 Job, else the
// gpusched.io/job label, else the pod alone; annotations
// (gpusched.io/min-replicas, model, priority, gpu-type) set a job's gang
// size and settings. Pods with scheduling gates are never bound, and
// their job waits for every gate.
//
// GPUs also come from Dynamic Resource Allocation (dra.go, claims.go):
// the GPU devices of ResourceSlices count among their nodes' GPUs (type
// and memory from the devices' productName and memory), a pod's
// ResourceClaims among its GPUs; kube-scheduler's structured allocator
// narrows a job's eligible nodes to those where its claims can be
// allocated and, once the core has chosen the nodes, picks the devices,
// whose allocation and reservation the bind workers write before the
// Binding; kube-controller-manager's resourceclaim controller releases
// them.
//
// Resources besides GPUs (resources.go) are counted as kube-scheduler's
// NodeResourcesFit counts them: a pod asks what
// k8s.io/component-helpers/resource's PodRequests sums up (containers, init
// containers and sidecars, pod-level requests, overhead), and a node
// offers its allocatable less what every pod bound there asks, save
// gpusched's running jobs, which the state charges.
//
// Every pod gpusched binds passes kube-scheduler's filters on its node
// (docs/KUBERNETES.md, "Node filters"): taints and node affinity
// (eligible.go), bound volumes' node affinity and zones (volumes.go), and
// the filters that look at other pods — host ports, required pod affinity
// and anti-affinity (the placed pods' too), DoNotSchedule topology spread
// — with kube-scheduler 1.36's semantics (filters.go reads a pod's terms,
// affinity.go evaluates them against a round's topo of placed pods). A
// round whose waiting jobs such filters concern builds a filterRound
// (podfilter.go): the pod placer places those jobs on the nodes that admit
// them, pod by pod where their pods constrain one another (spread.go),
// swaps nodes the placer ranks alike for those kube-scheduler's
// preferences score higher (preferences.go), and Start re-checks them
// against the pods bound earlier in the round. Waiting pods name the
// filters that rule nodes out in kube-scheduler's words (reasons.go).
//
// A round (round.go, state.go) builds the model cluster and state from the
// world, runs engine.Schedule, and carries the plan out with engine.Apply
// and this package's Applier (apply.go): Start binds a gang's pods through
// the Binding subresource, all or none; Preempt deletes a job's pods with
// their own grace period; Migrate preempts and reserves the new GPUs;
// Resize resizes an elastic Volcano Job or batch Job through its owner
// (elastic.go: the worker task's replicas or parallelism, new pods bound in
// one step, shrinks deleting the highest ranks with grace), and elastic
// jobs keep a host list ConfigMap (hosts.go); Volcano Jobs are read through
// the dynamic client, and their PodGroups' phases kept in step
// (volcano.go). The API calls run in workers
// after the round (work.go). Pending pods carry their wait reason — the
// service's words, engine.Wait* — in the PodScheduled=False condition and
// FailedScheduling events; bound and preempted pods get Scheduled and
// Preempted events. Progress and checkpoints come from pod annotations
// (progress.go), feeding checkpoint-aware victims and online throughput
// profiles as in the service. With leader election (a coordination.k8s.io
// Lease) only the leader schedules. Authenticator guards /metrics served
// beyond loopback with the API server's TokenReviews and
// SubjectAccessReviews, as kube-scheduler does. docs/KUBERNETES.md is the
// user's documentation.
package kube
