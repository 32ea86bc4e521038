// Package lp solves the linear programs of gpusched's allocation-matrix
// policies (maxmin, maxthroughput, ftf): for n jobs and K GPU types, the
// share of time x_jk that job j should get on type k.
//
// Every such program has the same shape (Gavel, Narayanan et al., OSDI
// 2020, §3–4):
//
//	maximize   Σ_j Σ_k Value_jk·x_jk + Fair·t
//	subject to Σ_k x_jk        ≤ Row_j    for every job j   (time shares)
//	           Σ_j Size_j·x_jk ≤ Cap_k    for every type k  (GPUs of the type)
//	           t ≤ Σ_k Rate_jk·x_jk        for every job j   (when Fair > 0)
//	           x_jk ≥ 0, and x_jk = 0 where Use_jk is false
//
// With Fair > 0 and Value = 0 it is heterogeneity-aware max-min fairness;
// with Fair = 0 it is max-sum-throughput; a small Value beside Fair breaks
// the ties of the max-min optimum in favour of throughput.
//
// The solver is a primal-dual interior-point method (Mehrotra's
// predictor–corrector) that exploits the block structure: each job's rows
// touch only its own K variables, and only the K capacity rows and the
// single variable t link jobs. The normal equations are solved by block
// elimination — a 2×2 block per job, a rank-one update for t
// (Sherman–Morrison) and a dense K×K Schur complement for the capacity rows
// (Cholesky) — so an iteration costs O(n·K²) time and O(n·K) memory, where a
// general dense simplex would cost O(n²·K) per pivot and store an
// (2n+K)×(nK) matrix. At 2,000 jobs and 8 types a solve takes a few
// milliseconds (docs/BENCHMARKS.md). The tests check it against gonum's
// simplex on random and degenerate instances.
//
// Among several optimal allocations an interior-point method returns one
// near the centre of the optimal face, not a vertex: in a max-min program the
// capacity left once every job has its fair share is spread over the jobs
// that can use it rather than given to a few.
//
// The package is part of the pure core: no I/O, no clock, no globals.
package lp
