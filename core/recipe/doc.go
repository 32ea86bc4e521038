// Package recipe assembles an engine from stage names — the names users give
// to --policy, --placer and --scaler in every shell — like a recipe: one
// constructor, one switch per stage, no registration at init time.
package recipe
