// Package nodes is the scheduler service's node table: a machine with an
// agent (Node: its GPUs and other resources, whether it is ready, when it
// was last heard from, and its work — the replicas its agent must run,
// versioned, with those taken out that may still run and the exits
// acknowledged), its views (the agent's Work, the API's Node, the
// durable ledger.Node) and the core's cluster model of the ready nodes
// (Cluster, GPUType), and a job's record read against the table (GPUsOn,
// JobGPUType, ModelAlloc, NoteRan: for the lifecycle and the rooms).
// Package scheduler owns the table and changes it
// under its lock; the agent protocol's semantics (registration, the long
// poll, status reports) are the scheduler's, as they change jobs.
package nodes
