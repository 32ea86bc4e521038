// Package ledger is the durable form of the service's jobs and nodes:
// the records the store keeps under "jobs/<id>" (Record: the API's job
// plus what rebuilds its replicas after a restart) and "nodes/<name>"
// (Node), their encoding, the rules read off a record (its membership,
// its master, its live GPUs; what the lifecycle derives from a record
// alone: Resized, Resizable, ResumeNote, CheckpointNote, PickPort), and
// reading them back without a scheduler (ReadJobs, ReadNodes: a server
// that does not lead answers from them).
// Package scheduler owns the records' transactions; nothing else writes
// them.
package ledger
