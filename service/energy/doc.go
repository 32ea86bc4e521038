// Package energy is live energy for a shell that runs jobs on real
// machines: seed 002 on live machines and the energy accounting
// (docs/ENERGY.md, "Live").
//
//   - power readings (power.go): the agents' readings become each job's
//     energy (split by GPU share) and a bounded ring of calibration
//     samples per node, stored under "power/<node>";
//   - accounts (account.go, modelled.go): every ready node's energy,
//     measured or modelled from its class's power model while it sends no
//     readings, split by load state; and the modelled energy of what ran;
//   - learned thresholds (learn.go): each node class's load thresholds per
//     algorithm type, calibrated from its samples (calibrate.Fit);
//   - measured distances (probes.go): the agents' RTT probes of the data
//     endpoints jobs name, as the network of the energy placer;
//   - the energy placer's inputs (placer.go), rebuilt when they change,
//     and idle nodes reported for power-down (suspend.go);
//   - the report (report.go): the accounts, the jobs' energy and the pack
//     replay (package replay), and the Prometheus collector (metrics.go);
//   - the room (room.go): a Live with its shell's lock and World, what the
//     shell's callers are handed (the report, the replay's inputs, the
//     calibration, the power samples; package scheduler's Energy).
//
// A Live reads its shell through the narrow World interface (the nodes,
// the cluster, the jobs on a node) and charges the jobs' energy through
// it; the shell calls Reading and Probes with every status report,
// Integrate, AccountModelled and Refresh around each round, Tick every
// tick, and the views (NodeView, Report, Calibration) for its API. A Live
// is not safe for concurrent use: the shell serializes the calls (package
// scheduler holds its mutex). It knows no transport, and only the
// service's World (Table, table.go: package jobs' table of the scheduler)
// reads job records: the Kubernetes shell may feed it just as well.
package energy
