// Package web holds the front-end library that gpusched's HTML pages use —
// the dashboard (/ui on the server) and the simulator's report
// (sim --report DIR writes index.html) — embedded in the binary, so that
// no page loads anything from the network: uPlot (https://github.com/leeoniya/uPlot,
// MIT licence, in uplot/LICENSE), a small library of time-series charts.
//
// The files under uplot/ are copied from the npm package by
// scripts/vendor-web.sh (make vendor-web) and committed, so a build needs
// neither npm nor the network; uplot/VERSION names the version.
package web
