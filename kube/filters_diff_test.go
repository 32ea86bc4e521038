package kube

import (
	_ "k8s.io/kubernetes/pkg/scheduler/framework/plugins/interpodaffinity"
	_ "k8s.io/kubernetes/pkg/scheduler/framework/plugins/podtopologyspread"
	_ "k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeports"
	_ "k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	_ "k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeaffinity"
	_ "k8s.io/kubernetes/pkg/scheduler/framework/plugins/tainttoleration"
	_ "k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodename"
	_ "k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeunschedulable"
	_ "k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumezone"
	_ "k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumerestrictions"
	_ "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	_ "k8s.io/kubernetes/pkg/scheduler/backend/cache"
)
