package kube

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestPodGroupOf(t *testing.T) {
	name := "nat"
	tests := []struct {
		name   string
		labels map[string]string
		ann    map[string]string
		native *string
		want   string // api/name, "" for none
		err    string
	}{
		{name: "none"},
		{name: "volcano annotation", ann: map[string]string{AnnVolcanoGroup: "pg"}, want: "scheduling.volcano.sh/pg"},
		{name: "volcano label", labels: map[string]string{LabelVolcanoGroup: "pg"}, want: "scheduling.volcano.sh/pg"},
		{name: "volcano both alike", labels: map[string]string{LabelVolcanoGroup: "pg"}, ann: map[string]string{AnnVolcanoGroup: "pg"},
			want: "scheduling.volcano.sh/pg"},
		{name: "volcano both differ", labels: map[string]string{LabelVolcanoGroup: "b"}, ann: map[string]string{AnnVolcanoGroup: "a"},
			want: "scheduling.volcano.sh/a", err: "names two pod groups: scheduling.volcano.sh a (annotation scheduling.k8s.io/group-name) and scheduling.volcano.sh b (label scheduling.volcano.sh/group-name)"},
		{name: "scheduler-plugins", labels: map[string]string{LabelCoschedulingGroup: "cos"}, want: "scheduling.x-k8s.io/cos"},
		{name: "native", native: &name, want: "scheduling.k8s.io/nat"},
		{name: "native and scheduler-plugins", native: &name, labels: map[string]string{LabelCoschedulingGroup: "cos"},
			want: "scheduling.k8s.io/nat", err: "and scheduling.x-k8s.io cos (label scheduling.x-k8s.io/pod-group)"},
		{name: "empty values", labels: map[string]string{LabelCoschedulingGroup: "", LabelVolcanoGroup: ""}},
		{name: "kueue pod group", labels: map[string]string{LabelKueueGroup: "kg"}, want: "kueue.x-k8s.io/kg"},
		{name: "jobset", labels: map[string]string{LabelJobSet: "train"}, want: "jobset.x-k8s.io/train"},
		{name: "jobset with a volcano group", labels: map[string]string{LabelJobSet: "train", LabelVolcanoGroup: "pg"}, want: "scheduling.volcano.sh/pg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: tt.labels, Annotations: tt.ann}}
			if tt.native != nil {
				p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: tt.native}
			}
			g, others, why := podGroupOf(p)
			got := ""
			if g != nil {
				got = g.api.String() + "/" + g.name
			}
			if got != tt.want || !strings.Contains(why, tt.err) || (tt.err == "") != (why == "") || (why != "") != (len(others) > 0) {
				t.Errorf("got %q, others %v, %q; want %q, %q", got, others, why, tt.want, tt.err)
			}
		})
	}
}

func TestStripGroup(t *testing.T) {
	tests := []struct {
		api        groupAPI
		obj        string
		min        int
		phase, sch string
		owned      bool
	}{
		{apiVolcano, `{"spec":{"minMember":3},"status":{"phase":"Inqueue"}}`, 3, "Inqueue", "", false},
		{apiVolcano, `{"metadata":{"ownerReferences":[{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","name":"j","uid":"u","controller":true}]},"spec":{"minMember":2}}`,
			2, "", "", true},
		{apiVolcano, `{"spec":{}}`, 1, "", "", false},
		{apiCoscheduling, `{"spec":{"minMember":4,"scheduleTimeoutSeconds":10},"status":{"phase":"Running"}}`, 4, "Running", "", false},
		{apiCoscheduling, `{"spec":{"minMember":-5}}`, 1, "", "", false},
		{apiNative, `{"spec":{"schedulingPolicy":{"gang":{"minCount":8}}},"status":{"conditions":[{"type":"PodGroupScheduled","status":"True"}]}}`, 8, "", "True", false},
		{apiNative, `{"spec":{"schedulingPolicy":{"basic":{}}}}`, 1, "", "", false},
		{apiJobSet, `{"spec":{"replicatedJobs":[{"name":"a","replicas":2,"template":{"spec":{"parallelism":4,"completions":4}}},{"name":"b","template":{"spec":{}}}]}}`,
			9, "", "", false},
		{apiJobSet, `{"spec":{"replicatedJobs":[{"name":"a","replicas":1,"template":{"spec":{"parallelism":8,"completions":3}}},"junk"]}}`, 3, "", "", false},
	}
	for _, tt := range tests {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(`{"apiVersion":"x/v1","kind":"PodGroup","metadata":{"name":"g","namespace":"ns"}}`)); err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		if err := json.Unmarshal([]byte(tt.obj), &body); err != nil {
			t.Fatal(err)
		}
		full, _ := json.Marshal(merge(u.Object, body))
		if err := u.UnmarshalJSON(full); err != nil {
			t.Fatal(err)
		}
		out, err := stripGroup(tt.api)(u)
		if err != nil {
			t.Fatal(err)
		}
		g := out.(*podGroup)
		if g.min != tt.min || g.phase != tt.phase || g.scheduled != tt.sch || g.owned != tt.owned || g.Name != "g" || g.api != tt.api {
			t.Errorf("%v %s: %+v", tt.api, tt.obj, g)
		}
	}
}

// merge lays b's keys over a's, maps merged.
func merge(a, b map[string]any) map[string]any {
	for k, v := range b {
		if am, ok := a[k].(map[string]any); ok {
			if bm, ok := v.(map[string]any); ok {
				a[k] = merge(am, bm)
				continue
			}
		}
		a[k] = v
	}
	return a
}

func TestGroupPatch(t *testing.T) {
	now := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	waiting := groupState{pods: 2, bound: 0, min: 3, why: "waiting for the gang", incomplete: true}
	noGPUs := groupState{pods: 3, min: 3, why: "waiting for free GPUs"}
	bound := groupState{pods: 3, bound: 3, running: 1, min: 3, placed: true}
	running := groupState{pods: 3, bound: 3, running: 3, min: 3, placed: true}
	tests := []struct {
		api   groupAPI
		sched string
		st    groupState
		want  []string // fragments of the patch; none: no patch
	}{
		{apiVolcano, "", waiting, []string{`"phase":"Inqueue"`, `"type":"Unschedulable"`, `"reason":"NotEnoughTasks"`,
			`"message":"2/2 tasks in gang unschedulable: waiting for the gang"`, `"lastTransitionTime":"2026-11-29T08:00:00Z"`}},
		{apiVolcano, "", noGPUs, []string{`"reason":"NotEnoughResources"`, `"3/3 tasks in gang unschedulable: waiting for free GPUs"`}},
		{apiVolcano, "", running, []string{`"phase":"Running"`, `"running":3`, `"type":"Scheduled"`, `"reason":"tasks in gang are ready to be scheduled"`}},
		{apiCoscheduling, "", waiting, []string{`{"status":{"phase":"Pending","running":0}}`}},
		{apiCoscheduling, "", bound, []string{`"phase":"Scheduling"`, `"running":1`}},
		{apiCoscheduling, "", running, []string{`"phase":"Running"`, `"running":3`}},
		{apiNative, "", waiting, []string{`"type":"PodGroupScheduled"`, `"status":"False"`, `"reason":"Unschedulable"`, `"message":"waiting for the gang"`}},
		{apiNative, "", running, []string{`"status":"True"`, `"reason":"Scheduled"`}},
		{apiNative, "True", waiting, nil},
	}
	for _, tt := range tests {
		g := &podGroup{api: tt.api, min: tt.st.min, scheduled: tt.sched}
		sig, patch := groupPatch(g, tt.st, now)
		if len(tt.want) == 0 {
			if sig != "" || patch != nil {
				t.Errorf("%v %+v: want no patch, got %s", tt.api, tt.st, patch)
			}
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(string(patch), w) {
				t.Errorf("%v %+v: patch %s lacks %s", tt.api, tt.st, patch, w)
			}
		}
		if strings.Contains(sig, "lastTransitionTime") {
			t.Errorf("%v: the signature holds a time: %s", tt.api, sig)
		}
		if sig2, _ := groupPatch(g, tt.st, now.Add(time.Hour)); sig2 != sig {
			t.Errorf("%v: signature changes with time: %s, %s", tt.api, sig, sig2)
		}
	}
}

// FuzzStripGroup: any PodGroup object of any API reads without a panic,
// with a gang size of at least 1.
func FuzzStripGroup(f *testing.F) {
	for _, s := range []string{`{"spec":{"minMember":3}}`, `{"spec":{"schedulingPolicy":{"gang":{"minCount":2}}}}`,
		`{"status":{"conditions":[{"type":"PodGroupScheduled","status":"True"},7,null]}}`, `{"spec":{"minMember":"x"}}`,
		`{"metadata":{"name":"a","ownerReferences":[{"apiVersion":"batch.volcano.sh/v1alpha1","controller":true}]}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(`{"apiVersion":"x/v1","kind":"PodGroup"}`)); err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		if json.Unmarshal([]byte(s), &body) != nil {
			return
		}
		full, _ := json.Marshal(merge(u.Object, body))
		if u.UnmarshalJSON(full) != nil {
			return
		}
		for _, api := range groupAPIs() {
			out, err := stripGroup(api)(u)
			if err != nil {
				t.Fatal(err)
			}
			if g := out.(*podGroup); g.min < 1 || g.api != api {
				t.Fatalf("%v: %+v", api, g)
			}
		}
	})
}

func TestKueueCount(t *testing.T) {
	pods := func(counts ...string) []*podInfo {
		var out []*podInfo
		for i, c := range counts {
			out = append(out, &podInfo{name: fmt.Sprint("p", i), kueueCount: c})
		}
		return out
	}
	tests := []struct {
		counts []string
		want   int
		err    string
	}{
		{[]string{"2", "2"}, 2, ""},
		{[]string{" 3 "}, 3, ""},
		{[]string{""}, 0, `annotation kueue.x-k8s.io/pod-group-total-count="": want the group's number of pods`},
		{[]string{"0"}, 0, "want the group's number of pods, from 1 to 100000"},
		{[]string{"two"}, 0, `"two"`},
		{[]string{"2", "3"}, 0, `its pods disagree on annotation kueue.x-k8s.io/pod-group-total-count: p0 has "2", p1 has "3"`},
	}
	for _, tt := range tests {
		n, err := kueueCount(pods(tt.counts...))
		if n != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%q: %d, %v; want %d, %q", tt.counts, n, err, tt.want, tt.err)
		}
	}
}
