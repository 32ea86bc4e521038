// Package assets embeds the data that lets gpusched run with nothing
// configured: Gavel's throughput matrix (the default profile), a sample
// trace, and the default cluster. See LICENSE.gavel for the Gavel files'
// origin and licence (MIT).
//
// The runtime assets live under internal/assets (this package, and web/:
// the pages' front-end library); the test beds under internal/testbed.
// Runtime assets import nothing of the module: every floor may embed them
// (core/purity_test.go's TestLayers checks it).
package assets
