// Package calibrate derives a device's two load thresholds th1 < th2 for one
// algorithm type from a load ramp (seed 002, claims 4–5). The placer's load
// states use them: load ≤ th1 is state 1, th1 < load ≤ th2 state 2, above th2
// state 3 (seed 002, claim 3).
//
// The package is pure: Fit takes a plain slice of samples, so readings from
// any source (a CSV file, NVML or Redfish later) can feed it; it reads no
// file, clock or global. ParseCSV is the one entry point that reads, from an
// io.Reader its caller opens.
//
// # Algorithm
//
// The test task raises the load linearly; every Sample holds the load, the
// power draw (the BMC's reading) and the work done per second at that load.
// Fit then (seed 002, claim 5):
//
//  1. computes the energy per unit of work e(load) = PowerW / Throughput at
//     every sample (an idle reading, load 0 with throughput 0, has none and is
//     skipped);
//  2. smooths e and differentiates it in one step with a local linear fit:
//     at every sample load x it fits a least-squares line to the samples whose
//     load lies within Window/2 of x (at least five samples: the nearest five
//     when the window holds fewer). The line's value at x is the smoothed
//     curve, its slope the derivative e'(x). This is a first-order
//     Savitzky–Golay filter generalised to uneven load spacing; unlike a
//     moving average followed by finite differences it is unbiased for a
//     straight stretch even at the ends of the ramp;
//  3. classifies every sample: falling where e' < −τ, rising where e' > +τ,
//     stable otherwise (seed 002, claim 5: the falling region lies on the
//     negative half-axis of the rate-of-change curve, the stable region near
//     zero, the rising region on the positive half-axis);
//  4. splits the ramp into three consecutive runs, falling, stable, rising,
//     the seed's shape, choosing the two split points that leave the fewest
//     samples whose class disagrees with their run. A few samples that noise
//     pushes over τ thus do not end a region, which a walk that stops at the
//     first such sample would. Either outer run may be empty;
//  5. th1 is where the falling region ends and the stable region begins, th2
//     where the stable region ends and the rising region begins (seed 002,
//     claim 4), each interpolated linearly between the last sample of one run
//     and the first of the next, at the load where e' crosses −τ or +τ.
//
// # What "clearly" means
//
// The threshold τ at a sample is the larger of two terms:
//
//   - a scale term, Tolerance × e_ref, where e_ref is the minimum of the
//     smoothed curve (the energy per unit of work of the stable region).
//     With the default Tolerance 0.1 the curve is stable while it changes by
//     less than 10 % of its stable level per unit of load (1 % per 0.1 of
//     load). The term makes Fit independent of the units of power and work:
//     multiplying all powers or all throughputs by a constant changes
//     nothing;
//   - a noise term, NoiseZ × the standard error of the local slope. The
//     noise is taken as relative to the curve (power meters err by a share of
//     the reading) and estimated robustly from the data: 1.4826 × the median
//     of the local fits' residuals, each divided by the smoothed value and
//     corrected for its leverage. With the default NoiseZ 3 random
//     fluctuations of the readings are not mistaken for a falling or rising
//     region.
//
// Where a curve joins its stable region smoothly ("falling first sharply,
// then slowly", seed 002, figure 4), the near-flat ends of the falling and
// rising regions count as stable: th1 comes out a little low and th2 a
// little high, by more the noisier the readings and the gentler the curve.
// Where it joins with a kink, the window blurs the kink and the error goes
// the other way, by up to about Window/2. On the synthetic curves of the
// tests both stay within ±0.05 of the true breakpoints.
//
// # Conventions and errors
//
// Samples may come in any order; Fit sorts a copy by load. Fit needs at least
// MinSamples usable samples. A region the ramp never shows collapses onto
// the ramp's end: with no falling region th1 is the lowest sampled load, with
// no rising region th2 the highest. A curve that falls or rises over the
// whole ramp, or whose stable region is narrower than the smoothing window (a
// V shape, a parabola), has no stable region and is an error
// (ErrNoStableRegion): a plateau narrower than the window cannot be told from
// the bottom of a V, so use a smaller Window and denser samples for it. Other
// errors: too few samples (ErrTooFewSamples), a load outside [0, 1], a
// negative or non-finite power, a non-positive throughput at a positive load
// (ErrBadSample), and two samples with the same load (ErrDuplicateLoad).
//
// Fit costs O(n log n + n·w) for n samples of which w fall in one window.
//
// # CSV format
//
// ParseCSV reads comma-separated values with a header line naming the
// columns load, power_w and throughput and, optionally, type (the algorithm
// type; DefaultType when the column is absent or the cell empty), in any
// order. Lines starting with # are comments; blank lines are skipped. Loads
// must increase strictly within each type. Errors have the form FILE:LINE:
// message and name the column at fault.
package calibrate
