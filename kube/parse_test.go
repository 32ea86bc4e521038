package kube

import (
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseSettings(t *testing.T) {
	tests := []struct {
		ann  map[string]string
		want settings
		err  string
	}{
		{map[string]string{}, settings{}, ""},
		{map[string]string{AnnMinReplicas: "4", AnnModel: "ResNet-50 (batch size 64)", AnnPriority: "-2", AnnGPUType: "Tesla-V100-SXM2-32GB"},
			settings{minReplicas: 4, model: "ResNet-50 (batch size 64)", priority: -2, gpuType: "v100m32"}, ""},
		{map[string]string{AnnMinReplicas: " 2 "}, settings{minReplicas: 2}, ""},
		{map[string]string{AnnMinReplicas: "two"}, settings{}, `annotation gpusched.io/min-replicas="two": want a whole number of pods from 1 to 100000`},
		{map[string]string{AnnMinReplicas: "0"}, settings{}, `annotation gpusched.io/min-replicas="0"`},
		{map[string]string{AnnMinReplicas: "100001"}, settings{}, `annotation gpusched.io/min-replicas="100001"`},
		{map[string]string{AnnPriority: "high"}, settings{}, `annotation gpusched.io/priority="high": want an integer`},
		{map[string]string{AnnModel: " "}, settings{}, `annotation gpusched.io/model=" "`},
		{map[string]string{AnnGPUType: ""}, settings{}, `annotation gpusched.io/gpu-type=""`},
	}
	for _, tc := range tests {
		got, err := parseSettings(tc.ann)
		if tc.err != "" {
			var ae *AnnotationError
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &ae) {
				t.Errorf("%v: error %v, want %q", tc.ann, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %+v, %v; want %+v", tc.ann, got, err, tc.want)
		}
	}
}

func TestParseProgress(t *testing.T) {
	at := time.Date(2026, 11, 25, 16, 4, 5, 120000000, time.UTC)
	got, err := parseProgress(map[string]string{AnnSteps: "1500", AnnCheckpointSteps: "1400", AnnLastCheckpoint: "2026-11-25T16:04:05.12Z"})
	if err != nil || !got.hasSteps || got.steps != 1500 || !got.hasCkpt || got.ckptSteps != 1400 || !got.ckptAt.Equal(at) {
		t.Fatalf("%+v, %v", got, err)
	}
	got, err = parseProgress(map[string]string{AnnSteps: "-1", AnnLastCheckpoint: "yesterday", AnnCheckpointSteps: "7"})
	if err == nil || !strings.Contains(err.Error(), `annotation gpusched.io/steps="-1"`) || got.hasSteps || got.hasCkpt || got.ckptSteps != 7 {
		t.Fatalf("%+v, %v", got, err)
	}
}

func FuzzParseAnnotations(f *testing.F) {
	for _, s := range []string{"4", "two", "-1", "2026-11-25T16:04:05Z", "", " 9 ", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		ann := map[string]string{}
		for _, k := range []string{AnnMinReplicas, AnnModel, AnnPriority, AnnGPUType, AnnSteps, AnnCheckpointSteps, AnnLastCheckpoint} {
			ann[k] = v
		}
		s, err := parseSettings(ann)
		if err == nil && (s.minReplicas < 1 || s.minReplicas > maxMinReplicas || s.gpuType == "") {
			t.Fatalf("%q accepted as %+v", v, s)
		}
		if err != nil && !strings.Contains(err.Error(), "annotation gpusched.io/") {
			t.Fatalf("%q: error %v names no annotation", v, err)
		}
		p, err := parseProgress(ann)
		if err == nil && (p.steps < 0 || p.ckptSteps < 0) {
			t.Fatalf("%q accepted as %+v", v, p)
		}
	})
}

func TestProductType(t *testing.T) {
	for _, tc := range []struct {
		product, typ string
		known        bool
	}{
		{"Tesla-V100-SXM2-16GB", "v100", true},
		{"NVIDIA-A100-SXM4-80GB", "a100-80", true},
		{"Tesla-K80", "k80", true},
		{"NVIDIA-H100-80GB-HBM3", "h100", true},
		{"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "nvidia-a100-sxm4-40gb-mig-1g-5gb", false},
		{"NVIDIA-GeForce-RTX-4090", "rtx-4090", false},
		{"", "unknown", false},
	} {
		typ, known := ProductType(tc.product)
		if typ != tc.typ || known != tc.known {
			t.Errorf("ProductType(%q) = %q, %v; want %q, %v", tc.product, typ, known, tc.typ, tc.known)
		}
	}
}

func TestPodReading(t *testing.T) {
	ctrl := true
	gpu := func(n string) v1.ResourceRequirements {
		return v1.ResourceRequirements{Limits: v1.ResourceList{ResourceGPU: resource.MustParse(n)}}
	}
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "train-0", Namespace: "ml", UID: "u1",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "train", UID: "j1", Controller: &ctrl}},
		Annotations:     map[string]string{annCompletionIndex: "3", AnnModel: "A3C", "other.io/x": "y"}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a", Resources: gpu("2")}, {Name: "b", Resources: gpu("1")}},
			InitContainers: []v1.Container{{Name: "i", Resources: gpu("4")}}, NodeSelector: map[string]string{"pool": "x"}}}
	stripped, _ := stripPod(p)
	pi := newPodInfo(stripped.(*v1.Pod))
	if pi.gpus != 4 || pi.index != 3 || pi.key != "ml/Job/train/j1" || jobName(pi.key) != "ml/train" || pi.ann["other.io/x"] != "" || pi.ann[AnnModel] != "A3C" {
		t.Errorf("%+v", pi)
	}
	if pi.sig != constraintSig(p) || !strings.Contains(pi.sig, `"pool":"x"`) {
		t.Errorf("constraints %s", pi.sig)
	}
	p.OwnerReferences[0].Kind = "ReplicaSet"
	p.Labels = map[string]string{LabelJob: "exp"}
	if k := jobKey(p, controllerOf(p), nil); k != "ml/label/exp" || jobName(k) != "ml/exp" {
		t.Errorf("label key %s", k)
	}
	p.Labels = nil
	if k := jobKey(p, controllerOf(p), nil); k != "ml/pod/train-0/u1" || jobName(k) != "ml/train-0" {
		t.Errorf("pod key %s", k)
	}
}
