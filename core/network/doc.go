// Package network is the network model of seed 002 (issue 5): storage
// devices with their upload interfaces, every node's link (latency and
// bandwidth) to every storage device, and the pure functions the energy
// placer and the simulator need from it.
//
// Seed 002, step 1: a task's upload goes to the fastest interface (best link
// quality, lowest latency) and its data is stored on that interface's
// storage device (Network.Upload). Step 2: every node pings that storage
// device; its latency is the node's communication score, lower being better
// (Network.Latency). Starting a job costs a staging time: its dataset copied
// from the storage device to its nodes at the link bandwidth of the slowest
// one (Network.Staging).
//
// A cluster file (docs/CLUSTER.md) names the storage devices and either
// gives each node's links or lets a rack topology imply them (RackLinks):
// same-rack and cross-rack figures, overridden per node. Units: latency in
// milliseconds, bandwidth in gigabits per second (10^9 bit/s), dataset sizes
// in megabytes (10^6 bytes).
//
// The package is pure: it reads no file, clock or global.
package network
