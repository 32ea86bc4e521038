// Package assets embeds the data that lets gpusched run with nothing
// configured: Gavel's throughput matrix (the default profile), a sample
// trace, and the default cluster. See LICENSE.gavel for the Gavel files'
// origin and licence (MIT).
package assets
