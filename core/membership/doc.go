// Package membership turns a job's GPU allocation into what distributed
// training launchers need: the Horovod host list (one "host:slots" line per
// host, as printed by a horovodrun --host-discovery-script) and the
// torchrun / PyTorch distributed environment of every process or of every
// per-node launcher.
//
// A Membership is the ordered list of a job's hosts, each with its GPU
// indices in local-rank order, and a generation number. New builds the first
// generation from an allocation; Next builds the following one from a new
// allocation while keeping as much as possible in place, so that a resize
// (seed 000, step 6: every replica learns the new membership and training
// goes on) disturbs the fewest ranks:
//
//   - Hosts that stay keep their relative order, so the master host (node
//     rank 0) stays the master for as long as it is in the job. Hosts that
//     leave are removed; new hosts are appended at the end, in the order in
//     which they first appear in the allocation.
//   - If the master host leaves, the first remaining host in the old order
//     becomes node rank 0 and MASTER_ADDR moves to it.
//   - On a host that stays, a GPU that stays keeps its local rank whenever
//     that rank is still below the host's new GPU count. The free local ranks
//     are filled first with the host's new GPUs (ascending device index), then
//     with the GPUs that had to move (in their old local-rank order). This
//     keeps the largest possible number of GPUs at their local rank.
//   - Global ranks are assigned host by host in node-rank order, and on each
//     host in local-rank order: the first GPU of node rank n has global rank
//     equal to the number of GPUs on node ranks 0..n-1.
//   - The generation increases by one when the set of slots changes and stays
//     the same when it does not (the order of the allocation list does not
//     matter to Next).
//
// New orders hosts by their first appearance in the allocation (the caller
// chooses the master by listing its GPUs first) and a host's GPUs by device
// index.
//
// Host names go into "host:slots" lines and comma-separated host lists, so
// they must not be empty and must not contain ':', ',', white space or
// control characters. GPU indices are device indices on the host (as NVML and
// nvidia-smi number them) and must not be negative.
//
// The package is pure: plain data in, plain data out, no I/O, no clock, no
// globals. Every error wraps one of the Err constants, so callers can test it
// with errors.Is.
package membership
