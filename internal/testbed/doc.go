// Package testbed groups gpusched's test beds, one package a folder: real
// components that tests start and drive — agenttest (a fake agent speaking
// the agent protocol, and fake GPUs), etcdtest (real etcd members),
// kubebed (a real Kubernetes control plane with kwok nodes, through
// scripts/testbed) and servicetest (a real scheduler service and agents in
// the test's process).
//
// Test beds sit on top of the module (servicetest imports the service);
// only tests and the scripts under scripts/ import them, never runtime
// code (core/purity_test.go's TestLayers checks it).
package testbed
