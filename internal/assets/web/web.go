package web

import (
	"embed"
	"strings"
)

//go:embed uplot
var files embed.FS

// read returns an embedded file; the files are part of the binary, so
// reading them cannot fail.
func read(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic("web: embedded file missing: " + name) // a broken build, not bad input
	}
	return b
}

// UPlotJS returns uPlot's minified script (an IIFE defining the global
// uPlot).
func UPlotJS() []byte { return read("uplot/uPlot.iife.min.js") }

// UPlotCSS returns uPlot's style sheet.
func UPlotCSS() []byte { return read("uplot/uPlot.min.css") }

// UPlotLicense returns uPlot's licence, served and inlined with it.
func UPlotLicense() []byte { return read("uplot/LICENSE") }

// UPlotVersion returns the vendored uPlot version.
func UPlotVersion() string { return strings.TrimSpace(string(read("uplot/VERSION"))) }
