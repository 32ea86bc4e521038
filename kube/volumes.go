package kube

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// Volumes (docs/KUBERNETES.md, "Volumes"): a pod's PersistentVolumeClaims
// bound to a PersistentVolume with node affinity (local volumes, a
// zonal disk's topology) or zone and region labels admit only the nodes
// that kube-scheduler's VolumeBinding and VolumeZone filters admit. A pod
// whose claim is not bound yet waits: gpusched does not bind claims or
// trigger their provisioning (kube-scheduler's VolumeBinding PreBind).

// Reasons a node fails the volume filters, in kube-scheduler's words.
const (
	reasonPVNodeAffinity = "node(s) didn't match PersistentVolume's node affinity"
	reasonPVZone         = "node(s) had no available volume zone"
)

// volumes is what gpusched knows of claims and volumes: claims by
// namespace/name, volumes by name (stripped).
type volumes struct {
	pvcs map[string]*v1.PersistentVolumeClaim
	pvs  map[string]*v1.PersistentVolume
	// nsLabels holds the namespaces' labels (pod affinity's namespace
	// selectors).
	nsLabels map[string]labels.Set
}

// setNamespace records a namespace's labels.
func (w *world) setNamespace(ns *v1.Namespace) bool {
	if w.vol.nsLabels == nil {
		w.vol.nsLabels = map[string]labels.Set{}
	}
	old, had := w.vol.nsLabels[ns.Name]
	w.vol.nsLabels[ns.Name] = labels.Set(ns.Labels)
	return !had || !maps.Equal(old, labels.Set(ns.Labels))
}

func (w *world) deleteNamespace(ns *v1.Namespace) bool {
	delete(w.vol.nsLabels, ns.Name)
	return false
}

// namespaceLabels returns a namespace's labels (nil when unknown).
func (w *world) namespaceLabels(ns string) labels.Set { return w.vol.nsLabels[ns] }

// stripNamespace keeps a namespace's name and labels.
func stripNamespace(obj any) (any, error) {
	ns, ok := obj.(*v1.Namespace)
	if !ok {
		return obj, nil
	}
	return &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name, UID: ns.UID, ResourceVersion: ns.ResourceVersion, Labels: ns.Labels}}, nil
}

// setPVC records a claim and reports whether rounds see a difference.
func (w *world) setPVC(c *v1.PersistentVolumeClaim) bool {
	if w.vol.pvcs == nil {
		w.vol.pvcs = map[string]*v1.PersistentVolumeClaim{}
	}
	key := c.Namespace + "/" + c.Name
	if old := w.vol.pvcs[key]; old != nil && old.Spec.VolumeName == c.Spec.VolumeName {
		w.vol.pvcs[key] = c
		return false
	}
	w.vol.pvcs[key] = c
	w.nodesVersion++ // eligibility depends on it
	return true
}

func (w *world) deletePVC(c *v1.PersistentVolumeClaim) bool {
	delete(w.vol.pvcs, c.Namespace+"/"+c.Name)
	w.nodesVersion++
	return true
}

// setPV records a volume and reports whether rounds see a difference.
func (w *world) setPV(pv *v1.PersistentVolume) bool {
	if w.vol.pvs == nil {
		w.vol.pvs = map[string]*v1.PersistentVolume{}
	}
	w.vol.pvs[pv.Name] = pv
	w.nodesVersion++
	return true
}

func (w *world) deletePV(pv *v1.PersistentVolume) bool {
	delete(w.vol.pvs, pv.Name)
	w.nodesVersion++
	return true
}

// volumeClaims returns the names of the volume claims pod p uses: its
// persistentVolumeClaim volumes and its generic ephemeral volumes' claims
// (named pod-volume).
func volumeClaims(p *v1.Pod) []string {
	var out []string
	for _, v := range p.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			out = append(out, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			out = append(out, p.Name+"-"+v.Name)
		}
	}
	return out
}

// volumeReason returns why node n does not take pod p for its claims'
// volumes, "" when it does.
func (w *world) volumeReason(p *v1.Pod, n *v1.Node) string {
	for _, name := range volumeClaims(p) {
		c := w.vol.pvcs[p.Namespace+"/"+name]
		switch {
		case c == nil:
			return fmt.Sprintf("persistentvolumeclaim %q not found", name)
		case c.Spec.VolumeName == "":
			return fmt.Sprintf("its PersistentVolumeClaim %s is not bound (gpusched places pods whose claims are bound)", name)
		}
		pv := w.vol.pvs[c.Spec.VolumeName]
		if pv == nil {
			return "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
		}
		if why := pvAdmits(pv, n); why != "" {
			return why
		}
	}
	return ""
}

// pvAdmits is VolumeBinding's check of a bound volume's node affinity and
// VolumeZone's of its zone and region labels.
func pvAdmits(pv *v1.PersistentVolume, n *v1.Node) string {
	if na := pv.Spec.NodeAffinity; na != nil && na.Required != nil {
		if ok, err := nodeaffinity.NewLazyErrorNodeSelector(na.Required).Match(n); err != nil || !ok {
			return reasonPVNodeAffinity
		}
	}
	keys := []string{v1.LabelFailureDomainBetaZone, v1.LabelFailureDomainBetaRegion, v1.LabelTopologyZone, v1.LabelTopologyRegion}
	constrained := false
	for _, k := range keys {
		if _, ok := n.Labels[k]; ok {
			constrained = true
		}
	}
	if !constrained {
		return "" // a node without topology labels: a single-zone cluster
	}
	for _, k := range keys {
		want, ok := pv.Labels[k]
		if !ok {
			continue
		}
		v, ok := n.Labels[k]
		if !ok {
			v, ok = n.Labels[gaLabel(k)]
		}
		if !ok || !zoneSet(want)[v] {
			return reasonPVZone
		}
	}
	return ""
}

// gaLabel translates a beta topology label to its GA name.
func gaLabel(k string) string {
	switch k {
	case v1.LabelFailureDomainBetaZone:
		return v1.LabelTopologyZone
	case v1.LabelFailureDomainBetaRegion:
		return v1.LabelTopologyRegion
	}
	return k
}

// zoneSet splits a volume's zone label ("a__b": either zone) into a set.
func zoneSet(v string) map[string]bool {
	out := map[string]bool{}
	for _, z := range strings.Split(v, "__") {
		if z = strings.TrimSpace(z); z != "" {
			out[z] = true
		}
	}
	return out
}

// volumeInformers returns the informers of claims and volumes, with their
// transforms and handlers.
func (s *Scheduler) volumeInformers() ([]cache.SharedIndexInformer, []cache.TransformFunc, []cache.ResourceEventHandler) {
	pvcs := coreinformers.NewPersistentVolumeClaimInformer(s.client, metav1.NamespaceAll, 0, cache.Indexers{})
	pvs := coreinformers.NewPersistentVolumeInformer(s.client, 0, cache.Indexers{})
	nss := coreinformers.NewNamespaceInformer(s.client, 0, cache.Indexers{})
	w := s.w
	return []cache.SharedIndexInformer{pvcs, pvs, nss}, []cache.TransformFunc{stripPVC, stripPV, stripNamespace},
		[]cache.ResourceEventHandler{
			s.handler(onWorld(s, w.setPVC), onWorld(s, w.deletePVC)),
			s.handler(onWorld(s, w.setPV), onWorld(s, w.deletePV)),
			s.handler(onWorld(s, w.setNamespace), onWorld(s, w.deleteNamespace)),
		}
}

// stripPVC keeps a claim's identity and volume.
func stripPVC(obj any) (any, error) {
	c, ok := obj.(*v1.PersistentVolumeClaim)
	if !ok {
		return obj, nil
	}
	out := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: c.Namespace, UID: c.UID, ResourceVersion: c.ResourceVersion}}
	out.Spec.VolumeName = c.Spec.VolumeName
	return out, nil
}

// stripPV keeps a volume's name, labels and node affinity.
func stripPV(obj any) (any, error) {
	pv, ok := obj.(*v1.PersistentVolume)
	if !ok {
		return obj, nil
	}
	out := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pv.Name, UID: pv.UID, ResourceVersion: pv.ResourceVersion, Labels: pv.Labels}}
	out.Spec.NodeAffinity = pv.Spec.NodeAffinity
	return out, nil
}

// keepVolumeClaims keeps the pod's volumes that name claims.
func keepVolumeClaims(vs []v1.Volume) []v1.Volume {
	var out []v1.Volume
	for _, v := range vs {
		if v.PersistentVolumeClaim != nil {
			out = append(out, v1.Volume{Name: v.Name, VolumeSource: v1.VolumeSource{PersistentVolumeClaim: v.PersistentVolumeClaim}})
		} else if v.Ephemeral != nil {
			out = append(out, v1.Volume{Name: v.Name, VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}})
		}
	}
	return out
}

// volumeWait explains why no node takes a job's pods when their claims
// are the cause: a claim missing or not bound (kube-scheduler's PreFilter
// words), else kube-scheduler's account of the nodes; "" when the claims
// are not the cause.
func (r *round) volumeWait(rj *rjob) string {
	for _, p := range append(slices.Clone(rj.pending), rj.bound...) {
		if len(volumeClaims(p.obj)) == 0 || len(r.nodes) == 0 {
			continue
		}
		counts, volume := map[string]int{}, false
		for _, n := range r.nodes {
			why := staticReason(p.obj, n.obj)
			if why == "" {
				why = r.w.volumeReason(p.obj, n.obj)
				volume = volume || why != ""
			}
			if strings.HasPrefix(why, "persistentvolumeclaim ") || strings.HasPrefix(why, "its PersistentVolumeClaim") {
				return why // not a node's: the claim's
			}
			if why != "" {
				counts[why]++
			}
		}
		if volume {
			return nodesAvailable(0, len(r.nodes), counts)
		}
	}
	return ""
}
