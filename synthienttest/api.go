package synthienttest

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/internal/problem"
)

func notFound(w http.ResponseWriter, r *http.Request, detail string) {
	problem.Write(w, problem.Details{Type: errBase + "not-found", Status: http.StatusNotFound,
		Title: "Not Found", Detail: detail, Instance: r.URL.Path})
}

func badRequest(w http.ResponseWriter, r *http.Request, detail string) {
	problem.Write(w, problem.Details{Type: errBase + "bad-request", Status: http.StatusBadRequest,
		Title: "Bad Request", Detail: detail, Instance: r.URL.Path})
}

func validation(w http.ResponseWriter, r *http.Request, errs map[string][]string) {
	problem.Write(w, problem.Details{Type: errBase + "validation", Status: http.StatusUnprocessableEntity,
		Title: "Validation error", Errors: errs, Instance: r.URL.Path})
}

// writeJSON answers code with v as JSON, with its Content-Length.
func writeJSON(w http.ResponseWriter, code int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		problem.Write(w, problem.Details{Status: http.StatusInternalServerError, Detail: "encoding the response"})
		return
	}
	body = append(body, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// handleHealth answers /health: ok, or unhealthy with the problems
// SetUnhealthy set.
func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request, _ *apiKey, _ params) {
	s.mu.Lock()
	sick := append([]string(nil), s.sick...)
	s.mu.Unlock()
	if len(sick) > 0 {
		writeJSON(w, http.StatusServiceUnavailable, synthient.Health{Status: "unhealthy", Problems: sick})
		return
	}
	writeJSON(w, http.StatusOK, synthient.Health{Status: "ok"})
}

// SetUnhealthy makes /health answer 503 with these problems; no problems
// makes it healthy again.
func (s *Server) SetUnhealthy(problems ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sick = append([]string(nil), problems...)
}

// handleAccount answers /account/me: the account, and the key's scopes
// and credits.
func (s *Server) handleAccount(w http.ResponseWriter, _ *http.Request, k *apiKey, _ params) {
	now := s.now()
	relation := "OWNER"
	if k.name != "synthienttest" {
		relation = "ADMIN"
	}
	writeJSON(w, http.StatusOK, synthient.Account{
		FirstName: "Grace",
		LastName:  "Hopper",
		Email:     "grace@example.com",
		Organization: synthient.Organization{
			ID:       "2f0c9d1e-6b7a-4c55-9e1d-0a4b3c2d1e0f",
			Name:     "Example Labs",
			Relation: relation,
		},
		Scopes:      append([]string{}, k.scopes...),
		LookupQuota: synthient.LookupQuota{Credits: s.credits(k), ResetsIn: resetsIn(now)},
		APIKey:      &synthient.APIKeyInfo{ID: k.id, Name: k.name, CreatedAt: k.created},
	})
}
