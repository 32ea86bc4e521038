package kube

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The host list of an elastic job: the ConfigMap <job>-hosts, with one
// host:slots line per bound worker (key hosts) and the membership
// generation (key generation, also the annotation AnnHostsGeneration),
// which only moves forward. Mounted into the pods, it is the file
// horovodrun's --host-discovery-script prints (deploy/examples).
const (
	// HostsSuffix ends the name of a job's host list ConfigMap.
	HostsSuffix = "-hosts"
	// HostsKey and GenerationKey are the ConfigMap's data keys.
	HostsKey      = "hosts"
	GenerationKey = "generation"
	// AnnHostsGeneration is the generation, as an annotation too.
	AnnHostsGeneration = "gpusched.io/hosts-generation"
)

// hostName returns how a job's host list names pod p: its DNS name
// <hostname>.<subdomain> when it has a subdomain (a headless Service, as
// Volcano's svc plugin sets), else its IP, else "" (not addressable yet:
// it joins the list once it has an IP).
func hostName(p *v1.Pod) string {
	if p.Spec.Subdomain != "" {
		h := p.Spec.Hostname
		if h == "" {
			h = p.Name
		}
		return h + "." + p.Spec.Subdomain
	}
	return p.Status.PodIP
}

// hostsTask writes a job's host list.
type hostsTask struct {
	ns, name string
	owner    metav1.OwnerReference
	text     string
	gen      int64
	// job is the world's key of the job (its generation is raised when the
	// ConfigMap already holds a newer one).
	job string
}

// hostLists computes the host list of every running elastic job with an
// owner and queues a write when it changed: the workers bound (as the API
// server says, their node alive), in rank order, as host:slots.
func (r *round) hostLists() {
	for _, rj := range r.jobs {
		kj := rj.kj
		o := r.w.owners[kj.owner]
		if !rj.elastic || o == nil {
			continue
		}
		var b strings.Builder
		for _, p := range rj.bound {
			if p.node == "" || p.host == "" || !r.nodeAlive(p.node) {
				continue
			}
			fmt.Fprintf(&b, "%s:%d\n", p.host, rj.pod)
		}
		text := b.String()
		if kj.hostsGen > 0 && text == kj.hosts {
			continue
		}
		kj.hostsGen++
		kj.hosts = text
		api := "batch/v1"
		if o.vc != nil {
			api = volcanoJobAPI
		}
		r.work.hosts = append(r.work.hosts, hostsTask{ns: o.ns, name: o.name + HostsSuffix, text: text, gen: kj.hostsGen,
			job: kj.key, owner: metav1.OwnerReference{APIVersion: api, Kind: "Job", Name: o.name, UID: o.uid}})
	}
}

// hostsQueue holds the host list writes not yet made, the latest per
// ConfigMap; one worker makes them in order, so that generations only
// grow.
type hostsQueue struct {
	mu    sync.Mutex
	items map[string]hostsTask
	order []string
	ready chan struct{}
}

func newHostsQueue() *hostsQueue {
	return &hostsQueue{items: map[string]hostsTask{}, ready: make(chan struct{}, 1)}
}

func (q *hostsQueue) push(ts []hostsTask) {
	if len(ts) == 0 {
		return
	}
	q.mu.Lock()
	for _, t := range ts {
		k := t.ns + "/" + t.name
		if _, ok := q.items[k]; !ok {
			q.order = append(q.order, k)
		}
		q.items[k] = t
	}
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *hostsQueue) pop() (hostsTask, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.order) > 0 {
		k := q.order[0]
		q.order = q.order[1:]
		if t, ok := q.items[k]; ok {
			delete(q.items, k)
			return t, true
		}
	}
	return hostsTask{}, false
}

// hostsWorker writes host lists until ctx ends.
func (s *Scheduler) hostsWorker(ctx context.Context) {
	for {
		select {
		case <-s.hosts.ready:
		case <-ctx.Done():
			return
		}
		for {
			t, ok := s.hosts.pop()
			if !ok {
				break
			}
			for try := 0; try < 3 && ctx.Err() == nil; try++ {
				err := s.writeHosts(ctx, t)
				if err == nil {
					break
				}
				if !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
					s.log.Warn("cannot write the job's host list", "configmap", t.ns+"/"+t.name, "err", err)
					break
				}
			}
		}
	}
}

// writeHosts creates or updates the ConfigMap of t. When the ConfigMap
// already holds generation g ≥ t.gen (written before gpusched restarted),
// it writes g+1 and the job's generation continues from there.
func (s *Scheduler) writeHosts(ctx context.Context, t hostsTask) error {
	cms := s.client.CoreV1().ConfigMaps(t.ns)
	cm, err := cms.Get(ctx, t.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cm = &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: t.name, Namespace: t.ns,
			OwnerReferences: []metav1.OwnerReference{t.owner}}}
		fill(cm, t)
		_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	if old, perr := strconv.ParseInt(cm.Data[GenerationKey], 10, 64); perr == nil && old >= t.gen {
		if cm.Data[HostsKey] == t.text {
			return nil
		}
		t.gen = old + 1
		s.w.mu.Lock()
		if kj := s.w.jobs[t.job]; kj != nil && kj.hostsGen < t.gen {
			kj.hostsGen = t.gen
		}
		s.w.mu.Unlock()
	}
	fill(cm, t)
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	return err
}

// fill sets a ConfigMap's host list and generation.
func fill(cm *v1.ConfigMap, t hostsTask) {
	gen := strconv.FormatInt(t.gen, 10)
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[HostsKey], cm.Data[GenerationKey] = t.text, gen
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[AnnHostsGeneration] = gen
}
