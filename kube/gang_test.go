package kube_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestGang: on two 8-GPU nodes, a job of two 4-GPU bare pods (label
// gpusched.io/job, gpusched.io/min-replicas 2) waits with a readable
// reason while only one pod exists and is bound as a whole once both do;
// a pod asking for more GPUs than any node has, and one with a malformed
// annotation, get FailedScheduling events that say why, and stay unbound.
// A gang of which the API server refuses one Binding (a
// ValidatingAdmissionPolicy) is bound not at all: the pod bound first is
// deleted again.
func TestGang(t *testing.T) {
	e := newEnv(t)
	e.node(e.name+"-a", "Tesla-V100-SXM2-16GB", 8)
	e.node(e.name+"-b", "Tesla-V100-SXM2-16GB", 8)
	g := e.gpusched()

	pair0 := e.podSpec("pair-0", 4)
	pair0.Labels["gpusched.io/job"] = "pair"
	pair0.Annotations["gpusched.io/min-replicas"] = "2"
	e.create(pair0)
	big := e.podSpec("big", 16)
	e.create(big)
	typo := e.podSpec("typo", 1)
	typo.Annotations["gpusched.io/min-replicas"] = "two"
	e.create(typo)

	e.eventually("the lonely pod's reason", 30*time.Second, func() string {
		p := e.pod("pair-0")
		if want := "waiting for the gang: 1 of its 2 pods (gpusched.io/min-replicas) exist"; !strings.Contains(condition(p), want) {
			return condition(p)
		}
		return ""
	})
	e.eventually("FailedScheduling of the pod that fits no node", 30*time.Second, func() string {
		if !e.hasEvent("big", "FailedScheduling", "each of its pods asks for 16 nvidia.com/gpu, and the largest node it may use has 8") {
			return "no such event"
		}
		return ""
	})
	e.eventually("an Event naming the malformed annotation", 30*time.Second, func() string {
		if !e.hasEvent("typo", "FailedScheduling", `annotation gpusched.io/min-replicas="two"`) {
			return "no such event"
		}
		return ""
	})
	if n := e.pod("pair-0").Spec.NodeName; n != "" {
		t.Fatalf("half a gang was bound to %s", n)
	}

	pair1 := e.podSpec("pair-1", 4)
	pair1.Labels["gpusched.io/job"] = "pair"
	pair1.Annotations["gpusched.io/min-replicas"] = "2"
	e.create(pair1)
	n0, n1 := e.waitBound("pair-0", 30*time.Second), e.waitBound("pair-1", 30*time.Second)
	t.Logf("gang bound to %s and %s", n0, n1)
	for _, name := range []string{"pair-0", "pair-1"} {
		// Events are recorded asynchronously (client-go's broadcaster).
		e.eventually(name+"'s Scheduled event", 10*time.Second, func() string {
			if !e.hasEvent(name, "Scheduled", "Successfully assigned "+e.name+"/"+name+" to ") {
				return fmt.Sprintf("events %+v", e.events(name))
			}
			return ""
		})
	}
	for _, name := range []string{"big", "typo"} {
		if p := e.pod(name); p.Spec.NodeName != "" {
			t.Errorf("%s was bound to %s", name, p.Spec.NodeName)
		}
	}
	// The server's metric families, and the Binding latency.
	addr := g.metricsAddr(t)
	for name, want := range map[string]float64{
		`gpusched_gpus{type="v100"}`: 16, `gpusched_gpus_used{type="v100"}`: 8, `gpusched_jobs{state="running"}`: 1,
		`gpusched_jobs{state="queued"}`: 2, `gpusched_nodes{state="ready"}`: 2, `gpusched_submissions_total`: 3,
		`gpusched_queue_length{queue="0"}`: 2, `gpusched_bindings_total{result="bound"}`: 2, `gpusched_bind_latency_seconds_count`: 2,
	} {
		if got := metric(t, addr, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if metric(t, addr, "gpusched_schedule_round_seconds_count") < 1 {
		t.Error("no scheduling round counted")
	}

	// A gang the API server lets bind only in part.
	veto := vetoBinding(t, e, "veto-1")
	defer veto()
	for _, name := range []string{"veto-0", "veto-1"} {
		p := e.podSpec(name, 4)
		p.Labels["gpusched.io/job"] = "veto"
		p.Annotations["gpusched.io/min-replicas"] = "2"
		e.create(p)
	}
	e.eventually("the vetoed gang's outcome", 30*time.Second, func() string {
		if !e.hasEvent("veto-1", "FailedScheduling", "binding its gang failed (veto-1: ") {
			return "no failed-binding event on veto-1"
		}
		if !e.hasEvent("veto-0", "FailedScheduling", "deleted after binding: another pod of its gang could not be bound") {
			return "no deletion event on veto-0"
		}
		if p := e.pod("veto-0"); p != nil && p.DeletionTimestamp == nil {
			return "veto-0 is not deleted: " + p.Spec.NodeName
		}
		return ""
	})
	if p := e.pod("veto-1"); p == nil || p.Spec.NodeName != "" {
		t.Fatalf("veto-1: %+v", p)
	}
}

// vetoBinding installs a ValidatingAdmissionPolicy that denies the
// Binding of pod name in the test's namespace; it returns its removal.
func vetoBinding(t *testing.T, e *kenv, name string) func() {
	t.Helper()
	ctx := context.Background()
	fail := admissionv1.Fail
	pol := &admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: e.name + "-veto"},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": e.name}},
				ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods/binding"}}}}}},
			Validations: []admissionv1.Validation{{Expression: "object.metadata.name != '" + name + "'", Message: name + " may not be bound (test policy)"}}}}
	bind := &admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: e.name + "-veto"},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: pol.Name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}}}
	api := e.cs.AdmissionregistrationV1()
	if _, err := api.ValidatingAdmissionPolicies().Create(ctx, pol, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := api.ValidatingAdmissionPolicyBindings().Create(ctx, bind, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The policy takes effect once the API server has loaded it: probe it
	// with a Binding of the pod, which does not exist yet.
	e.eventually("the admission policy in force", 30*time.Second, func() string {
		err := e.cs.CoreV1().Pods(e.name).Bind(ctx, &v1.Binding{ObjectMeta: metav1.ObjectMeta{Name: name},
			Target: v1.ObjectReference{Kind: "Node", Name: "nowhere"}}, metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), "test policy") {
			return fmt.Sprint(err)
		}
		return ""
	})
	return func() {
		_ = api.ValidatingAdmissionPolicyBindings().Delete(ctx, bind.Name, metav1.DeleteOptions{})
		_ = api.ValidatingAdmissionPolicies().Delete(ctx, pol.Name, metav1.DeleteOptions{})
	}
}
