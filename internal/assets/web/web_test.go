package web

import (
	"bytes"
	"testing"
)

func TestEmbedded(t *testing.T) {
	if !bytes.Contains(UPlotJS(), []byte("uPlot")) || len(UPlotJS()) < 10000 {
		t.Errorf("uPlot's script is missing or truncated (%d bytes)", len(UPlotJS()))
	}
	if !bytes.Contains(UPlotCSS(), []byte(".uplot")) {
		t.Error("uPlot's style sheet lacks .uplot")
	}
	if !bytes.Contains(UPlotLicense(), []byte("MIT License")) {
		t.Error("uPlot's licence is not the MIT licence")
	}
	if UPlotVersion() == "" {
		t.Error("no version")
	}
}
