// Package synth writes synthetic job traces the way Gavel's job generator
// draws them (Narayanan et al., OSDI 2020; Gavel's scheduler/utils.py,
// generate_job), from a throughput matrix: a job type drawn uniformly from
// the matrix's job types; a scale factor of 1 (70 %), 2 (10 %), 4 (15 %) or
// 8 (5 %) GPUs; a run time on one V100 at that scale of 60·10^u seconds, u
// uniform in [1.5, 3] (80 %) or [3, 4] (20 %), turned into steps by the
// matrix's V100 throughput at that scale; Poisson arrivals. A type without
// a V100 measurement at the drawn scale is drawn again at scale 1.
//
// Options add what gpusched's experiments need beyond Gavel: each job's
// dataset size and upload address (seed 002), and elastic GPU ranges
// (seeds 000 and 001). The same options give the same jobs.
//
// Generate draws the jobs; WriteJSONL writes them in gpusched's native
// trace format (DESIGN.md, "Native trace format"), which package trace
// reads back.
package synth
