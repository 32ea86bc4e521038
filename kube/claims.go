package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

// Dynamic Resource Allocation: the rounds' side. A pod's claims count
// among its GPUs as many GPU devices as they ask for (draRefresh); the
// nodes on which kube-scheduler's own allocator
// (k8s.io/dynamic-resource-allocation/structured) cannot allocate a pod's
// claims, with the devices allocated now, are not eligible for its job
// (draEligible); once the core has chosen a job's nodes, the allocator
// picks each pod's devices there (draAllocate), and the bind workers write
// each claim's allocation and reservation before the pod's Binding
// (writeClaims), as kube-scheduler's DynamicResources plugin does in
// PreBind. kube-controller-manager's resourceclaim controller releases
// them: when a pod is done or gone it removes the pod from the claim's
// reservedFor, clears the allocation of a claim no pod uses, and deletes
// the claims it made from templates.

// draFeatures are the allocator's features under Kubernetes 1.36's
// default feature gates (as kube-scheduler's DynamicResources plugin sets
// them): admin access and prioritized lists (GA), partitionable devices,
// device taints and consumable capacity (beta, on); device binding
// conditions are alpha (off).
var draFeatures = structured.Features{AdminAccess: true, PrioritizedList: true, PartitionableDevices: true,
	DeviceTaints: true, ConsumableCapacity: true}

// draRound is a round's DRA working data, made when a job of the round
// has claims.
type draRound struct {
	alloc     structured.Allocator
	allocated structured.AllocatedState
	err       error
	// why holds a job's reason to wait for a claim, sigs its nodes
	// (draSigOf).
	why  map[*kjob]string
	sigs map[*kjob]*sigInfo
	// fit caches, by claim signature and usable node, whether the claims
	// can be allocated there (1) or not (2); 0: not tried. shared holds
	// the sigInfo of jobs alike (draSigOf). Both are dropped when an
	// allocation is made (fit nil).
	fit    map[string][]int8
	shared map[string]*sigInfo
}

// claimWrite is what a Binding's worker writes into a claim first: the
// allocation (nil when the claim was allocated already) and the pod's
// reservation. obj is the claim as the round saw it.
type claimWrite struct {
	obj   *resourceapi.ResourceClaim
	alloc *resourceapi.AllocationResult
}

// claimError is an error of writing a pod's claims: its Binding is not
// attempted and the pod is placed again.
type claimError struct {
	claim string
	err   error
}

func (e *claimError) Error() string { return "ResourceClaim " + e.claim + ": " + e.err.Error() }
func (e *claimError) Unwrap() error { return e.err }

// claimResult names the outcome of a failed claim write for
// gpusched_bindings_total ("" when err is not one).
func claimResult(err error) string {
	var ce *claimError
	switch {
	case !errors.As(err, &ce):
		return ""
	case apierrors.IsConflict(ce.err):
		return "claim_conflict"
	}
	return "claim_error"
}

// podClaim is one claim of a pod: its name in the pod, and the claim's
// namespace/name ("" while the resourceclaim controller has not made it
// from its template).
type podClaim struct {
	name, key, template string
}

// podClaims lists a pod's claims. A template's entry in the pod's status
// without a claim name means that no claim was needed: it is left out.
func podClaims(p *v1.Pod) []podClaim {
	var out []podClaim
	for _, pc := range p.Spec.ResourceClaims {
		c := podClaim{name: pc.Name}
		switch {
		case pc.ResourceClaimName != nil:
			c.key = p.Namespace + "/" + *pc.ResourceClaimName
		case pc.ResourceClaimTemplateName != nil:
			c.template = p.Namespace + "/" + *pc.ResourceClaimTemplateName
			i := slices.IndexFunc(p.Status.ResourceClaimStatuses, func(st v1.PodResourceClaimStatus) bool { return st.Name == pc.Name })
			switch {
			case i < 0:
			case p.Status.ResourceClaimStatuses[i].ResourceClaimName == nil:
				continue
			default:
				c.key = p.Namespace + "/" + *p.Status.ResourceClaimStatuses[i].ResourceClaimName
			}
		}
		out = append(out, c)
	}
	return out
}

// draRefresh sets the GPUs of gpusched's pods with claims: their
// nvidia.com/gpu plus the GPU devices their claims ask for (or hold), and
// what they wait for while a claim is missing; a job whose pods changed
// forms anew.
func (r *round) draRefresh() {
	d := &r.w.dra
	for uid := range d.pods {
		p := r.w.pods[uid]
		if p == nil {
			delete(d.pods, uid)
			continue
		}
		n, why := d.claimGPUs(p.obj)
		gpus := podGPUs(&p.obj.Spec) + int64(n)
		if gpus != p.gpus || why != d.waits[uid] {
			p.gpus = gpus
			d.waits[uid] = why
			if j := r.w.jobs[p.key]; j != nil {
				j.version++
			}
		}
	}
}

// claimGPUs returns how many GPU devices a pod's claims ask for (those
// allocated: hold), and why the pod cannot be placed yet ("" when it
// can).
func (d *draWorld) claimGPUs(p *v1.Pod) (int, string) {
	total := 0
	for _, pc := range podClaims(p) {
		if pc.key == "" {
			return 0, fmt.Sprintf("waiting for the ResourceClaim of its pod claim %q: the resourceclaim controller of kube-controller-manager has not made it from ResourceClaimTemplate %s yet",
				pc.name, pc.template)
		}
		c := d.claims[pc.key]
		switch {
		case c == nil:
			return 0, "waiting for ResourceClaim " + pc.key + ": it does not exist"
		case c.DeletionTimestamp != nil:
			return 0, "waiting for ResourceClaim " + pc.key + ": it is being deleted"
		}
		if a := d.allocation(c); a != nil {
			total += d.allocatedGPUs(a)
			continue
		}
		n, err := d.requestGPUs(c)
		if err != nil {
			return 0, "waiting for ResourceClaim " + pc.key + ": " + err.Error()
		}
		total += n
	}
	return total, ""
}

// allocation returns a claim's allocation: its status's, else the one
// gpusched is writing; nil when it has none.
func (d *draWorld) allocation(c *resourceapi.ResourceClaim) *resourceapi.AllocationResult {
	if c.Status.Allocation != nil {
		return c.Status.Allocation
	}
	return d.inflight[c.Namespace+"/"+c.Name]
}

// allocatedGPUs counts the GPU devices of an allocation.
func (d *draWorld) allocatedGPUs(a *resourceapi.AllocationResult) int {
	n := 0
	for _, res := range a.Devices.Results {
		if _, ok := d.gpus[deviceKey{res.Driver, res.Pool, res.Device}]; ok {
			n++
		}
	}
	return n
}

// requestGPUs counts the GPU devices an unallocated claim asks for: per
// request whose DeviceClass (and selectors) match GPU devices, its count
// (allocationMode ExactCount, 1 by default), or for allocationMode All the
// most such devices one node has. A request with alternatives
// (firstAvailable) counts as its first.
func (d *draWorld) requestGPUs(c *resourceapi.ResourceClaim) (int, error) {
	total := 0
	for _, req := range c.Spec.Devices.Requests {
		ex := req.Exactly
		if ex == nil && len(req.FirstAvailable) > 0 {
			sub := req.FirstAvailable[0]
			ex = &resourceapi.ExactDeviceRequest{DeviceClassName: sub.DeviceClassName, Selectors: sub.Selectors,
				AllocationMode: sub.AllocationMode, Count: sub.Count}
		}
		if ex == nil {
			continue
		}
		class := d.classes[ex.DeviceClassName]
		if class == nil {
			return 0, fmt.Errorf("its request %s names DeviceClass %s, which does not exist", req.Name, ex.DeviceClassName)
		}
		most, err := d.matchingGPUs(class, ex.Selectors)
		if err != nil {
			return 0, fmt.Errorf("request %s: %w", req.Name, err)
		}
		switch {
		case most == 0:
		case ex.AllocationMode == resourceapi.DeviceAllocationModeAll:
			total += most
		default:
			total += int(max(ex.Count, 1))
		}
	}
	return total, nil
}

// matchingGPUs returns the most GPU devices one node has that a class's
// and a request's selectors both select (CEL, evaluated by the DRA
// library's own cel package).
func (d *draWorld) matchingGPUs(class *resourceapi.DeviceClass, sel []resourceapi.DeviceSelector) (int, error) {
	if d.cel == nil {
		d.cel = cel.NewCache(64, cel.Features{})
	}
	exprs := make([]string, 0, len(class.Spec.Selectors)+len(sel))
	for _, s := range slices.Concat(class.Spec.Selectors, sel) {
		if s.CEL != nil {
			exprs = append(exprs, s.CEL.Expression)
		}
	}
	if d.matches == nil || d.matchesAt != d.devices {
		d.matches, d.matchesAt = map[string]int{}, d.devices
	}
	key := class.Name + "\x00" + strings.Join(exprs, "\x00")
	if n, ok := d.matches[key]; ok {
		return n, nil
	}
	perNode := map[string]int{}
	for _, s := range sortedSlices(d.slices) {
		for i := range s.Spec.Devices {
			dev := &s.Spec.Devices[i]
			node, ok := d.gpus[deviceKey{s.Spec.Driver, s.Spec.Pool.Name, dev.Name}]
			if !ok {
				continue
			}
			match, err := d.celMatch(exprs, s.Spec.Driver, dev)
			if err != nil {
				return 0, err
			}
			if match {
				perNode[node]++
			}
		}
	}
	most := 0
	for _, n := range perNode {
		most = max(most, n)
	}
	d.matches[key] = most
	return most, nil
}

// celMatch reports whether a device satisfies every CEL expression.
func (d *draWorld) celMatch(exprs []string, driver string, dev *resourceapi.Device) (bool, error) {
	for _, e := range exprs {
		res := d.cel.GetOrCompile(e)
		if res.Error != nil {
			return false, fmt.Errorf("CEL selector %q: %w", e, res.Error)
		}
		ok, _, err := res.DeviceMatches(context.Background(),
			cel.Device{Driver: driver, Attributes: dev.Attributes, Capacity: dev.Capacity})
		if err != nil || !ok {
			return false, nil // an error on one device (a missing attribute) does not select it, as in the allocator
		}
	}
	return true, nil
}

// draWaitReason returns why a waiting job's pods wait for their claims,
// "" when none does.
func (r *round) draWaitReason(rj *rjob) string {
	if !r.hasClaims(rj) {
		return ""
	}
	for _, p := range rj.pending {
		if why := r.w.dra.waits[p.uid]; why != "" {
			return why
		}
	}
	r.draSigOf(rj)
	return r.draState().why[rj.kj]
}

// hasClaims reports whether a job's pods have claims.
func (r *round) hasClaims(rj *rjob) bool {
	if len(r.w.dra.pods) == 0 {
		return false
	}
	return slices.ContainsFunc(rj.pending, func(p *podInfo) bool { return r.w.dra.pods[p.uid] }) ||
		slices.ContainsFunc(rj.bound, func(p *podInfo) bool { return r.w.dra.pods[p.uid] })
}

// draState returns the round's DRA data, made at its first use: the
// devices allocated now (claims' status and gpusched's writes in flight)
// and an allocator over every slice.
func (r *round) draState() *draRound {
	if r.dra != nil {
		return r.dra
	}
	d := &r.w.dra
	dr := &draRound{why: map[*kjob]string{}, sigs: map[*kjob]*sigInfo{},
		allocated: structured.AllocatedState{AllocatedDevices: sets.New[structured.DeviceID](),
			AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](), AggregatedCapacity: structured.NewConsumedCapacityCollection()}}
	for _, c := range d.claims {
		if a := d.allocation(c); a != nil {
			dr.take(a)
		}
	}
	for key, a := range d.inflight {
		if d.claims[key] == nil || d.claims[key].Status.Allocation == nil {
			dr.take(a)
		}
	}
	if d.cel == nil {
		d.cel = cel.NewCache(64, cel.Features{})
	}
	dr.alloc, dr.err = structured.NewAllocator(context.Background(), draFeatures, dr.allocated, classLister{d.classes},
		sortedSlices(d.slices), d.cel)
	r.dra = dr
	return dr
}

// take records an allocation's devices as allocated (admin access does
// not take a device).
func (dr *draRound) take(a *resourceapi.AllocationResult) {
	for _, res := range a.Devices.Results {
		if res.AdminAccess != nil && *res.AdminAccess {
			continue
		}
		id := structured.MakeDeviceID(res.Driver, res.Pool, res.Device)
		if res.ShareID != nil {
			dr.allocated.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, res.ShareID))
			continue
		}
		dr.allocated.AllocatedDevices.Insert(id)
	}
}

// classLister serves the world's DeviceClasses to the allocator.
type classLister struct {
	m map[string]*resourceapi.DeviceClass
}

func (l classLister) List() ([]*resourceapi.DeviceClass, error) {
	out := make([]*resourceapi.DeviceClass, 0, len(l.m))
	for _, c := range l.m {
		out = append(out, c)
	}
	return out, nil
}

func (l classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	if c := l.m[name]; c != nil {
		return c, nil
	}
	return nil, apierrors.NewNotFound(resourceapi.Resource("deviceclasses"), name)
}

// draSigOf is sigOf for a job with claims, kept for the round: the nodes
// that accept its pods (node constraints) and where their claims can be
// allocated (draEligible).
func (r *round) draSigOf(rj *rjob) *sigInfo {
	dr := r.draState()
	if si := dr.sigs[rj.kj]; si != nil {
		return si
	}
	// Jobs of one constraint signature whose pods' claims ask alike share
	// their sigInfo (and its fit statistics) until an allocation is made.
	key := ""
	if rj.sig != "" {
		key = rj.sig + "|" + r.claimSigs(rj)
		if si := dr.shared[key]; si != nil && dr.fit != nil {
			if !slices.Contains(si.usable, true) {
				r.draEligible(rj, slices.Clone(si.usable)) // its own reason, naming its claim
			}
			dr.sigs[rj.kj] = si
			return si
		}
	}
	pods := append(slices.Clone(rj.bound), rj.pending...)
	usable := make([]bool, len(r.nodes))
	for i, n := range r.nodes {
		usable[i] = !slices.ContainsFunc(pods, func(p *podInfo) bool {
			return !r.s.elig.accepts(r.w.nodesVersion, p.sig, p.obj, n)
		})
	}
	r.draEligible(rj, usable)
	si := &sigInfo{usable: usable, stats: map[statKey]fitStat{}}
	dr.sigs[rj.kj] = si
	if key != "" && dr.fit != nil {
		if dr.shared == nil {
			dr.shared = map[string]*sigInfo{}
		}
		dr.shared[key] = si
	}
	return si
}

// claimSigs joins the distinct claim signatures of a job's pending pods.
func (r *round) claimSigs(rj *rjob) string {
	var sigs []string
	for _, p := range rj.pending {
		if sig := r.claimSig(p); !slices.Contains(sigs, sig) {
			sigs = append(sigs, sig)
		}
	}
	return strings.Join(sigs, "|")
}

// draEligible narrows usable (per usable node) to the nodes where the
// claims of each of the job's pending pods can be allocated (each pod's
// alone, with the devices allocated now), and records the job's wait
// reason, naming the claim, when no node is left. Pods whose claims ask
// alike are tried once.
func (r *round) draEligible(rj *rjob, usable []bool) {
	seen := map[string]bool{}
	for _, p := range rj.pending {
		sig := r.claimSig(p)
		if seen[sig] {
			continue
		}
		seen[sig] = true
		first := slices.Index(usable, true)
		for i, n := range r.nodes {
			if usable[i] && !r.fitsOn(sig, p, i, n) {
				usable[i] = false
			}
		}
		if !slices.Contains(usable, true) {
			why := "waiting for the ResourceClaims of pod " + p.ns + "/" + p.name + ": no Ready node with GPUs accepts the pod"
			if first >= 0 {
				// The reason names this pod's claims (the cache is shared).
				if _, err := r.allocateOn(p, r.nodes[first]); err != nil {
					why = err.Error()
				}
			}
			r.draState().why[rj.kj] = why
			return
		}
	}
}

// fitsOn reports whether pod p's claims, of claim signature sig, can be
// allocated on usable node i (n): cached for the round by signature, until
// an allocation is made (pods of one template ask alike on every node).
func (r *round) fitsOn(sig string, p *podInfo, i int, n *nodeInfo) bool {
	dr := r.draState()
	if dr.fit == nil {
		dr.fit = map[string][]int8{}
	}
	f := dr.fit[sig]
	if f == nil {
		f = make([]int8, len(r.nodes))
		dr.fit[sig] = f
	}
	if f[i] == 0 {
		f[i] = 2
		if _, err := r.allocateOn(p, n); err == nil {
			f[i] = 1
		}
	}
	return f[i] == 1
}

// claimSig identifies what a pod's claims ask: the same for two pods
// whose claims are unallocated copies of one spec.
func (r *round) claimSig(p *podInfo) string {
	d := &r.w.dra
	var b strings.Builder
	for _, pc := range podClaims(p.obj) {
		c := d.claims[pc.key]
		if c == nil || d.allocation(c) != nil {
			b.WriteString("A:" + pc.key + ";")
			continue
		}
		spec, _ := json.Marshal(c.Spec)
		b.Write(spec)
		b.WriteByte(';')
	}
	return b.String()
}

// allocateOn allocates pod p's claims on node n, without recording
// anything: the allocation of each unallocated claim (nil for the
// allocated ones, which must be available on n), or an error naming the
// claim that cannot be allocated there.
func (r *round) allocateOn(p *podInfo, n *nodeInfo) ([]claimWrite, error) {
	d, dr := &r.w.dra, r.draState()
	if dr.err != nil {
		return nil, fmt.Errorf("the DRA allocator: %w", dr.err)
	}
	var writes []claimWrite
	var todo []*resourceapi.ResourceClaim
	for _, pc := range podClaims(p.obj) {
		c := d.claims[pc.key]
		if c == nil {
			return nil, fmt.Errorf("waiting for ResourceClaim %s: it does not exist", pc.key)
		}
		a := d.allocation(c)
		if a == nil {
			todo = append(todo, c)
			continue
		}
		if ok, err := allocationOn(a, n.obj); err != nil || !ok {
			return nil, fmt.Errorf("waiting for ResourceClaim %s: it is allocated on devices of other nodes", pc.key)
		}
		writes = append(writes, claimWrite{obj: c})
	}
	if len(todo) == 0 {
		return writes, nil
	}
	res, err := dr.alloc.Allocate(context.Background(), n.obj, todo)
	if err != nil && !errors.Is(err, structured.ErrFailedAllocationOnNode) {
		return nil, fmt.Errorf("waiting for ResourceClaim %s: %w", claimKey(todo[0]), err)
	}
	if err != nil || len(res) != len(todo) {
		names := make([]string, len(todo))
		for i, c := range todo {
			names[i] = claimKey(c)
		}
		return nil, fmt.Errorf("waiting for ResourceClaim %s: no free devices that its requests select on the nodes its pod may use (with the devices allocated now)",
			strings.Join(names, ", ResourceClaim "))
	}
	for i, c := range todo {
		writes = append(writes, claimWrite{obj: c, alloc: &res[i]})
	}
	return writes, nil
}

// allocationOn reports whether an allocation's devices are available on
// node n (its node selector).
func allocationOn(a *resourceapi.AllocationResult, n *v1.Node) (bool, error) {
	if a.NodeSelector == nil {
		return true, nil
	}
	return nodeaffinity.NewLazyErrorNodeSelector(a.NodeSelector).Match(n)
}

func claimKey(c *resourceapi.ResourceClaim) string { return c.Namespace + "/" + c.Name }

// draAllocate allocates the claims of the pods of binds on their nodes
// and records the allocations (in flight until the claims show them); on
// failure it records nothing and returns why.
func (r *round) draAllocate(binds []podBind) string {
	if len(r.w.dra.pods) == 0 {
		return ""
	}
	var done []claimWrite
	for i := range binds {
		b := &binds[i]
		p := r.w.pods[b.uid]
		if p == nil || !r.w.dra.pods[b.uid] {
			continue
		}
		n := r.w.nodes[b.node]
		writes, err := r.allocateOn(p, n)
		if err != nil {
			r.undoAllocations(done)
			for j := range binds[:i] {
				binds[j].claims = nil
			}
			return err.Error()
		}
		for _, w := range writes {
			if w.alloc != nil {
				r.w.dra.inflight[claimKey(w.obj)] = w.alloc
				r.draState().take(w.alloc)
				r.draState().fit, r.draState().shared = nil, nil // fewer devices are free now
				done = append(done, w)
			}
		}
		b.claims = writes
	}
	return ""
}

// undoAllocations forgets allocations draAllocate recorded.
func (r *round) undoAllocations(ws []claimWrite) {
	dr := r.draState()
	for _, w := range ws {
		if w.alloc == nil {
			continue
		}
		delete(r.w.dra.inflight, claimKey(w.obj))
		for _, res := range w.alloc.Devices.Results {
			dr.allocated.AllocatedDevices.Delete(structured.MakeDeviceID(res.Driver, res.Pool, res.Device))
		}
	}
}

// dropInflight forgets the allocations of a pod whose claims or Binding
// failed (world.mu held): the claims stay as the API server has them.
func (d *draWorld) dropInflight(b podBind) {
	for _, w := range b.claims {
		if w.alloc != nil {
			delete(d.inflight, claimKey(w.obj))
		}
	}
}

// writeClaims writes a pod's claims before its Binding, as
// kube-scheduler's DynamicResources plugin does in PreBind: for a claim
// gpusched allocated, its finalizer (resource.kubernetes.io/delete-protection,
// which lets the resourceclaim controller deallocate it later) in a
// normal update, then the allocation and the pod's reservation in one
// status update. Both updates carry the resource version the round saw:
// a conflict (another scheduler allocated or reserved the claim
// meanwhile) fails the pod's Binding, and the pod is placed again.
func (s *Scheduler) writeClaims(ctx context.Context, b podBind) error {
	for _, w := range b.claims {
		if err := s.writeClaim(ctx, b, w); err != nil {
			return &claimError{claim: claimKey(w.obj), err: err}
		}
	}
	return nil
}

func (s *Scheduler) writeClaim(ctx context.Context, b podBind, w claimWrite) error {
	api := s.client.ResourceV1().ResourceClaims(w.obj.Namespace)
	claim := w.obj.DeepCopy()
	if reservedFor(claim, b.uid) {
		return nil
	}
	if len(claim.Status.ReservedFor) >= resourceapi.ResourceClaimReservedForMaxSize {
		return fmt.Errorf("already reserved for %d consumers, the most a claim can have", len(claim.Status.ReservedFor))
	}
	if w.alloc != nil {
		if claim.Status.Allocation != nil {
			return errors.New("allocated elsewhere in the meantime")
		}
		if !slices.Contains(claim.Finalizers, resourceapi.Finalizer) {
			claim.Finalizers = append(claim.Finalizers, resourceapi.Finalizer)
			updated, err := api.Update(ctx, claim, metav1.UpdateOptions{})
			if err != nil {
				return fmt.Errorf("add finalizer: %w", err)
			}
			claim = updated
		}
		claim.Status.Allocation = w.alloc
	}
	claim.Status.ReservedFor = append(claim.Status.ReservedFor,
		resourceapi.ResourceClaimConsumerReference{Resource: "pods", Name: b.name, UID: b.uid})
	if _, err := api.UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("write allocation and reservation: %w", err)
	}
	return nil
}

// unreserveClaims takes a pod whose Binding failed from its claims'
// reservedFor, as kube-scheduler's DynamicResources plugin does in
// Unreserve (a strategic merge patch of the status); the allocations stay
// (a claim no pod uses is deallocated by the resourceclaim controller
// once the pod is gone).
func (s *Scheduler) unreserveClaims(ctx context.Context, b podBind) {
	for _, w := range b.claims {
		patch := fmt.Sprintf(`{"metadata": {"uid": %q}, "status": {"reservedFor": [{"$patch": "delete", "uid": %q}]}}`, w.obj.UID, b.uid)
		if _, err := s.client.ResourceV1().ResourceClaims(w.obj.Namespace).Patch(ctx, w.obj.Name, types.StrategicMergePatchType,
			[]byte(patch), metav1.PatchOptions{}, "status"); err != nil && !apierrors.IsNotFound(err) {
			s.log.Warn("cannot take the pod from its claim's reservedFor", "pod", b.ns+"/"+b.name, "claim", claimKey(w.obj), "err", err)
		}
	}
}

// reservedFor reports whether a claim is reserved for pod uid.
func reservedFor(c *resourceapi.ResourceClaim, uid types.UID) bool {
	return slices.ContainsFunc(c.Status.ReservedFor, func(r resourceapi.ResourceClaimConsumerReference) bool {
		return r.UID == uid
	})
}

// draTaken takes from each usable node's GPUs the GPU devices allocated to
// claims that no pod of gpusched's uses or is reserved for: other
// schedulers' pods' and unused allocated claims' (gpusched's own pods
// count their claims' GPUs themselves, a pending pod's allocated claim is
// free for that pod).
func (r *round) draTaken() {
	d := &r.w.dra
	if len(d.gpus) == 0 {
		return
	}
	ours := map[string]bool{}
	for uid := range d.pods {
		if p := r.w.pods[uid]; p != nil {
			for _, pc := range podClaims(p.obj) {
				ours[pc.key] = true
			}
		}
	}
	for key, c := range d.claims {
		a := c.Status.Allocation
		if a == nil || ours[key] || slices.ContainsFunc(c.Status.ReservedFor, func(ref resourceapi.ResourceClaimConsumerReference) bool {
			return r.w.pods[ref.UID] != nil
		}) {
			continue
		}
		for _, res := range a.Devices.Results {
			node, ok := d.gpus[deviceKey{res.Driver, res.Pool, res.Device}]
			if i, usable := r.nodeIdx[node]; ok && usable && (res.AdminAccess == nil || !*res.AdminAccess) {
				r.base[i]--
				r.free[i]--
			}
		}
	}
}
