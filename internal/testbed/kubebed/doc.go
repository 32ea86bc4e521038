// Package kubebed starts the project's real Kubernetes test bed
// (scripts/testbed, docs/KUBERNETES.md) for tests: etcd, kube-apiserver,
// kube-controller-manager and kwok on loopback ports — and, on request,
// Volcano's CRDs and job controller — in a temporary directory, stopped
// when the test (or the test binary) ends. Nothing is faked: a test talks
// to the bed with kubectl (Bed.Kubectl) or with any client given
// Bed.Kubeconfig.
//
// One bed per test:
//
//	bed := kubebed.Start(t, kubebed.Options{})
//	out, err := bed.Kubectl(ctx, "get", "nodes", "-o", "json")
//
// One bed shared by the tests of a package (started by the first test
// that asks, stopped after the last):
//
//	var bed = kubebed.NewShared(kubebed.Options{})
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		bed.Stop()
//		os.Exit(code)
//	}
//
//	func TestX(t *testing.T) { b := bed.Get(t); ... }
//
// With Options.Volcano a test is skipped, with a message naming the
// missing file, when ../shared/testbed/volcano-src.tar.gz (or
// $TESTBED_SHARED/testbed/volcano-src.tar.gz) is absent.
//
// The first bed on a machine builds the Kubernetes binaries (minutes; see
// docs/KUBERNETES.md) unless `make testbed-build` ran before; later beds
// start in seconds. Every bed also stops by itself when the process that
// started it exits without stopping it.
package kubebed
