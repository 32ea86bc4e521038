package model

import (
	"fmt"
	"slices"
	"sort"
)

// Names of the resources every shell knows besides GPUs. Amounts are
// integers: CPU in millicores, memory and ephemeral storage in bytes, pods
// (or processes: one per replica) and any other named resource, such as
// "rdma/hca", in units.
const (
	ResourceCPU       = "cpu"
	ResourceMemory    = "memory"
	ResourcePods      = "pods"
	ResourceEphemeral = "ephemeral-storage"
)

// Resources maps resource names other than GPUs to amounts (see
// ResourceCPU). A node's Resources are what it offers to jobs (its
// allocatable capacity); a job's are what one replica asks for.
type Resources map[string]int64

// Get returns the amount of resource name, 0 when absent.
func (r Resources) Get(name string) int64 { return r[name] }

// Names returns the resource names of r, sorted.
func (r Resources) Names() []string {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Equal reports whether r and o hold the same amounts (a missing entry
// equals a zero one).
func (r Resources) Equal(o Resources) bool {
	for k, v := range r {
		if o[k] != v {
			return false
		}
	}
	for k, v := range o {
		if r[k] != v {
			return false
		}
	}
	return true
}

// Vec is an amount per resource of a cluster, in the order of
// Cluster.Resources.
type Vec []int64

// indexResources records the resources that the cluster's nodes declare:
// their sorted names and each node's capacity in that order. A node that
// does not declare a resource another node declares has none of it.
func (c *Cluster) indexResources() error {
	seen := map[string]bool{}
	for _, n := range c.Nodes {
		for name, v := range n.Capacity {
			if name == "" {
				return fmt.Errorf("node %s: a resource with an empty name", n.Name)
			}
			if v < 0 {
				return fmt.Errorf("node %s: negative %s capacity %d", n.Name, name, v)
			}
			seen[name] = true
		}
	}
	if len(seen) == 0 {
		return nil
	}
	for name := range seen {
		c.resNames = append(c.resNames, name)
	}
	sort.Strings(c.resNames)
	c.capacity = make([]int64, len(c.Nodes)*len(c.resNames))
	for i, n := range c.Nodes {
		for r, name := range c.resNames {
			c.capacity[i*len(c.resNames)+r] = n.Capacity[name]
		}
		c.addShape(i)
	}
	return nil
}

// nodeShape is one kind of node: its GPU type and count and its capacity,
// with the number of nodes of that kind.
type nodeShape struct {
	typ, gpus, count int
	capa             Vec
}

// addShape counts node i under its shape.
func (c *Cluster) addShape(i int) {
	n, capa := c.Nodes[i], c.Capacity(i)
	for k := range c.shapes {
		if sh := &c.shapes[k]; sh.typ == n.Type && sh.gpus == n.GPUs && slices.Equal(sh.capa, capa) {
			sh.count++
			return
		}
	}
	c.shapes = append(c.shapes, nodeShape{typ: n.Type, gpus: n.GPUs, count: 1, capa: capa})
}

// Holds returns how many GPUs of type t the cluster's nodes could give, if
// it ran alone, a job whose replicas have replicaGPUs GPUs and ask req
// each: per node, its GPUs or as many whole replicas as its resources hold
// (TypeGPUs(t) when req is nil).
func (c *Cluster) Holds(t int, req Vec, replicaGPUs int) int {
	if req == nil {
		return c.TypeGPUs(t)
	}
	return c.holds(t, req, replicaGPUs, nil)
}

// Scarcest returns the resource that keeps the most GPUs of type t from a
// job as Holds counts them, or -1 when none does.
func (c *Cluster) Scarcest(t int, req Vec, replicaGPUs int) int {
	if req == nil {
		return -1
	}
	cut := make([]int, len(req))
	c.holds(t, req, replicaGPUs, cut)
	limit := -1
	for r, k := range cut {
		if k > 0 && (limit < 0 || k > cut[limit]) {
			limit = r
		}
	}
	return limit
}

// holds is Holds, adding to cut[r] the GPUs that resource r keeps from the
// job when cut is not nil.
func (c *Cluster) holds(t int, req Vec, replicaGPUs int, cut []int) int {
	rg, gpus := int64(max(replicaGPUs, 1)), 0
	for _, sh := range c.shapes {
		if sh.typ != t {
			continue
		}
		k, by := sh.gpus, -1
		for r, q := range req {
			if q <= 0 {
				continue
			}
			if m := int(min(sh.capa[r]/q*rg, int64(sh.gpus))); m < k {
				k, by = m, r
			}
		}
		gpus += k * sh.count
		if cut != nil && by >= 0 {
			cut[by] += (sh.gpus - k) * sh.count
		}
	}
	return gpus
}

// MostOf returns the largest capacity of resource r on a node of GPU type
// t (any type when t < 0) and that node's name.
func (c *Cluster) MostOf(t, r int) (int64, string) {
	best, name := int64(-1), ""
	for i, n := range c.Nodes {
		if t >= 0 && n.Type != t {
			continue
		}
		if v := c.Capacity(i)[r]; v > best {
			best, name = v, n.Name
		}
	}
	return max(best, 0), name
}

// Resources returns the names of the resources besides GPUs that the
// cluster models, sorted; empty when its nodes declare none, in which case
// only GPUs limit where jobs go. Do not modify the slice.
func (c *Cluster) Resources() []string { return c.resNames }

// Vectored reports whether the cluster models any resource besides GPUs.
func (c *Cluster) Vectored() bool { return len(c.resNames) > 0 }

// Capacity returns node n's capacity of the cluster's resources, in the
// order of Resources. Do not modify the slice.
func (c *Cluster) Capacity(n int) Vec {
	r := len(c.resNames)
	return c.capacity[n*r : (n+1)*r : (n+1)*r]
}

// ResourceIndex returns the index of the named resource in Resources, or
// -1 when the cluster does not model it.
func (c *Cluster) ResourceIndex(name string) int {
	i, ok := slices.BinarySearch(c.resNames, name)
	if !ok {
		return -1
	}
	return i
}

// Request returns what one replica of spec asks of the cluster's
// resources, in the order of Resources: its Requests, with one pod when
// the cluster counts pods and the spec names none. Requests of resources
// the cluster does not model are not limited here (a shell that must
// refuse them does so, Unmodelled). It returns nil when the cluster models
// no resource or the replica asks for none of them.
func (c *Cluster) Request(spec *JobSpec) Vec {
	if len(c.resNames) == 0 {
		return nil
	}
	var v Vec
	for r, name := range c.resNames {
		q, ok := spec.Requests[name]
		if !ok && name == ResourcePods {
			q = 1
		}
		if q == 0 {
			continue
		}
		if v == nil {
			v = make(Vec, len(c.resNames))
		}
		v[r] = q
	}
	return v
}

// Unmodelled returns the first resource (by name) that spec asks for and
// the cluster does not model, or "".
func (c *Cluster) Unmodelled(spec *JobSpec) string {
	for _, name := range spec.Requests.Names() {
		if spec.Requests[name] > 0 && c.ResourceIndex(name) < 0 {
			return name
		}
	}
	return ""
}

// Replicas returns how many replicas of a job whose replicas have
// replicaGPUs GPUs each a node holds when it holds gpus of the job's GPUs:
// a started replica counts whole.
func Replicas(gpus, replicaGPUs int) int {
	rg := max(replicaGPUs, 1)
	return (gpus + rg - 1) / rg
}

// FormatAmount writes an amount of the named resource for people: CPUs
// as cores ("2", "0.5"), memory and storage in binary units ("64Gi"),
// anything else as a count.
func FormatAmount(name string, v int64) string {
	switch name {
	case ResourceCPU:
		if v%1000 == 0 {
			return fmt.Sprintf("%d", v/1000)
		}
		return fmt.Sprintf("%dm", v)
	case ResourceMemory, ResourceEphemeral:
		for _, u := range []struct {
			s     string
			shift uint
		}{{"Ti", 40}, {"Gi", 30}, {"Mi", 20}, {"Ki", 10}} {
			if v >= 1<<u.shift && v%(1<<u.shift) == 0 {
				return fmt.Sprintf("%d%s", v>>u.shift, u.s)
			}
		}
	}
	return fmt.Sprintf("%d", v)
}
