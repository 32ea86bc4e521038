package assets

import _ "embed" // for go:embed

//go:embed simulation_throughputs.json
var throughputs []byte

//go:embed sample.trace
var sample []byte

// Throughputs returns Gavel's throughput matrix (JSON). The caller must not
// modify the returned bytes.
func Throughputs() []byte { return throughputs }

// SampleTrace returns the embedded sample trace, in Gavel's format: the 96
// jobs of Gavel's max_min_fairness physical-cluster trace.
func SampleTrace() []byte { return sample }

// SampleTraceName is the name under which the sample trace appears in
// messages and summaries.
const SampleTraceName = "embedded:gavel-max_min_fairness.trace"

// DefaultGPUs is the cluster used when neither --gpus nor --cluster is
// given: the heterogeneous 8+8+8 cluster of Gavel's experiments.
const DefaultGPUs = "v100=8,p100=8,k80=8"
