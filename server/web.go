package server

import (
	"embed"
	"io/fs"
	"net/http"
)

// web holds the page and its assets; they are compiled into the binary,
// and the page loads nothing from elsewhere.
//
//go:embed web
var web embed.FS

func (s *Server) webRoutes(mux *http.ServeMux) {
	assets, err := fs.Sub(web, "web")
	if err != nil {
		panic(err) // the embedded folder exists at compile time
	}
	files := http.FileServerFS(assets)
	secure := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; "+
				"frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
			// No other page may frame this one (clickjacking); for browsers
			// without frame-ancestors.
			w.Header().Set("X-Frame-Options", "DENY")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.Header().Set("Referrer-Policy", "no-referrer")
			h.ServeHTTP(w, r)
		})
	}
	mux.Handle("GET /{$}", secure(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, assets, "index.html")
	})))
	mux.Handle("GET /static/", secure(http.StripPrefix("/static/", files)))
}
