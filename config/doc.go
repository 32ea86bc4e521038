// Package config builds a model.Cluster from what a user writes: the --gpus
// flag ("v100=8,p100=8,k80=8", see ParseGPUs) or a cluster file in YAML (see
// File and ParseClusterFile; the format is described in docs/CLUSTER.md).
//
// The GPU catalog (Catalog, LookupType) lists the GPU types gpusched knows,
// with per-GPU memory and the vendor's rated FP32 performance; docs/GPUS.md
// gives the sources.
//
// The package is pure: it takes strings and bytes and returns values. It
// reads no file, environment variable or clock and holds no globals; the
// command line reads files and passes their contents in.
package config
