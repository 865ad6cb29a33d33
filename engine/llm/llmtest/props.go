package llmtest

import (
	"encoding/json"
	"net/http"
)

// WithContextWindow makes the server say its context window as
// llama.cpp's llama-server does: GET /props answers
// default_generation_settings.n_ctx (and total_slots), and each
// /v1/models entry carries meta.n_ctx and meta.n_ctx_train. By default
// the server has no /props and its models no meta, like OpenAI's API.
func WithContextWindow(n int) Option { return func(c *config) { c.window = n } }

// handleProps answers GET /props in llama-server's shape.
func (s *Server) handleProps(w http.ResponseWriter, r *http.Request) {
	if s.cfg.window <= 0 {
		writeError(w, http.StatusNotFound, "invalid_request_error", "unknown_url", "Unknown request URL: GET /props.")
		return
	}
	if r.Method != http.MethodGet {
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "", "Only GET is supported on /props.")
		return
	}
	props := map[string]any{
		"default_generation_settings": map[string]any{
			"n_ctx":  s.cfg.window,
			"params": map[string]any{"temperature": 0, "seed": 42},
		},
		"total_slots": 1,
		"model_alias": "llmtest",
		"modalities":  map[string]bool{"vision": false, "audio": false},
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(props)
}

// modelMeta is the meta of a /v1/models entry of llama-server.
type modelMeta struct {
	NCtx      int `json:"n_ctx"`
	NCtxTrain int `json:"n_ctx_train"`
}

// meta is the meta a /v1/models entry carries, nil without a window.
func (s *Server) meta() *modelMeta {
	if s.cfg.window <= 0 {
		return nil
	}
	return &modelMeta{NCtx: s.cfg.window, NCtxTrain: 2 * s.cfg.window}
}
