package api

import (
	"bytes"
	_ "embed"
	"net/http"
)

// openAPIDocument is the contract of every route (api/openapi.yaml). It is
// embedded so the document served is the one this build was tested against.
//
//go:embed openapi.yaml
var openAPIDocument []byte

// OpenAPI returns a copy of the server's OpenAPI 3.1 document.
func OpenAPI() []byte { return bytes.Clone(openAPIDocument) }

// openAPI serves GET /openapi.yaml without authentication, like /healthz: the
// contract says nothing a caller could not learn by calling the routes.
func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/yaml")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	// A failed write means the client went away; there is nobody to tell.
	_, _ = w.Write(openAPIDocument)
}
