package server

import (
	"embed"
	"net/http"

	"github.com/gpusched/gpusched/internal/assets/web"
)

// The dashboard (docs/DASHBOARD.md): static pages embedded in the binary
// that call the REST API from the browser; the front-end library (uPlot)
// comes from package web. Nothing is loaded from elsewhere, which the
// pages' Content-Security-Policy enforces.

//go:embed ui
var uiFiles embed.FS

// uiCSP allows the dashboard to load and call only its own server (uPlot
// sets element styles, hence the inline styles).
const uiCSP = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// uiAsset is one file of the dashboard.
type uiAsset struct {
	contentType string
	body        func() []byte
}

// uiAssets maps the paths under /ui/ to their files.
var uiAssets = map[string]uiAsset{
	"":                         {"text/html; charset=utf-8", embedded("ui/index.html")},
	"app.js":                   {"text/javascript; charset=utf-8", embedded("ui/app.js")},
	"app.css":                  {"text/css; charset=utf-8", embedded("ui/app.css")},
	"vendor/uPlot.iife.min.js": {"text/javascript; charset=utf-8", web.UPlotJS},
	"vendor/uPlot.min.css":     {"text/css; charset=utf-8", web.UPlotCSS},
	"vendor/LICENSE.uPlot.txt": {"text/plain; charset=utf-8", web.UPlotLicense},
}

// embedded returns a reader of an embedded dashboard file; the files are
// part of the binary (a test reads every one).
func embedded(name string) func() []byte {
	return func() []byte {
		b, err := uiFiles.ReadFile(name)
		if err != nil {
			return []byte("missing from this build: " + name)
		}
		return b
	}
}

// uiRoutes are the dashboard's pages, served beside the API (outside
// /v1, so not in the OpenAPI document).
func uiRoutes() []route {
	return []route{
		{http.MethodGet, "/ui", func(w http.ResponseWriter, _ *http.Request) {
			// relative, so that it works behind a reverse proxy's path prefix
			w.Header().Set("Location", "ui/")
			w.WriteHeader(http.StatusMovedPermanently)
		}},
		{http.MethodGet, "/ui/{file...}", handleUI},
	}
}

// handleUI serves one file of the dashboard; 404 for any other path.
func handleUI(w http.ResponseWriter, r *http.Request) {
	a, ok := uiAssets[r.PathValue("file")]
	if !ok {
		writeError(w, http.StatusNotFound, "", "no such page: %s", r.URL.Path)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("Content-Security-Policy", uiCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(a.body())
}
