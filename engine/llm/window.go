package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// ErrNoWindow is wrapped by ServerWindow's error when the server answered
// but says nothing of its context window.
var ErrNoWindow = errors.New("the server does not say its context window")

// ServerWindow asks the server described by cfg for the context window it
// serves model with, where the server says so itself: llama.cpp's
// llama-server in GET /props (default_generation_settings.n_ctx, the
// window of one slot) or in the meta of its /v1/models entry (n_ctx),
// vLLM in its /v1/models entry (max_model_len). It returns the window
// and the place it was read from, or an error wrapping ErrNoWindow when
// neither says, ErrUnreachable when the host cannot be reached. It makes
// no chat call and never retries; the caller bounds it with ctx.
func ServerWindow(ctx context.Context, cfg Config, model string) (int, string, error) {
	cfg = cfg.withDefaults()
	base := strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return 0, "", fmt.Errorf("the base URL %q is not a valid http(s) URL; enter it like https://api.example.com/v1", redact(cfg.BaseURL, cfg.APIKey))
	}
	client := guardedClient(cfg.HTTPClient, cfg)
	root := strings.TrimSuffix(base, "/v1")
	var props struct {
		Settings struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	perr := getJSON(ctx, client, root, "/props", cfg.APIKey, u.Host, &props)
	if perr == nil && props.Settings.NCtx > 0 {
		return props.Settings.NCtx, "/props", nil
	}
	if errors.Is(perr, ErrUnreachable) || ctx.Err() != nil {
		return 0, "", perr
	}
	var models struct {
		Data []struct {
			ID          string   `json:"id"`
			Aliases     []string `json:"aliases"`
			MaxModelLen int      `json:"max_model_len"`
			Meta        *struct {
				NCtx int `json:"n_ctx"`
			} `json:"meta"`
		} `json:"data"`
	}
	if err := getJSON(ctx, client, base, "/models", cfg.APIKey, u.Host, &models); err != nil {
		return 0, "", err
	}
	for _, m := range models.Data {
		if m.ID != model && !slices.Contains(m.Aliases, model) && len(models.Data) != 1 {
			continue
		}
		switch {
		case m.Meta != nil && m.Meta.NCtx > 0:
			return m.Meta.NCtx, "/v1/models (meta.n_ctx)", nil
		case m.MaxModelLen > 0:
			return m.MaxModelLen, "/v1/models (max_model_len)", nil
		}
	}
	return 0, "", fmt.Errorf("%w: neither /props nor /v1/models gives one for %q", ErrNoWindow, model)
}

// getJSON reads the JSON document at root+path into v (at most 1 MiB
// of it).
func getJSON(ctx context.Context, client *http.Client, root, path, key, host string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, root+path, nil)
	if err != nil {
		return err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return guardKey(&unreachableError{host: host, cause: err, text: redact(err.Error(), key)}, key)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return fmt.Errorf("%w: GET %s answered HTTP %d", ErrNoWindow, path, resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v); err != nil {
		return fmt.Errorf("%w: GET %s did not answer JSON", ErrNoWindow, path)
	}
	return nil
}
