// Package jobs is the scheduler service's in-memory table: every job it
// keeps (Job: the durable record, the job in the model, what the latest
// rounds said of it), the active ones, the nodes, and the scheduling
// model's cluster and state built from them (Table), with the reads the
// rooms around the scheduler share: the state and view a job shows, the
// jobs in order of submission, the GPUs a node's jobs hold.
//
// The table holds no lock: package scheduler owns it and holds its mutex
// for every read and write; the adapters of the other rooms (energy,
// learn, logs, metrics, queues) read it under that mutex.
package jobs
