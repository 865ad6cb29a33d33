package agent

import (
	"errors"
	"fmt"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/transcript"
)

// ModelChoice is one model a session can talk to: its client and name,
// the endpoint profile it is on, its window and input prices, and what
// the endpoint's cache and the model can do. Config embeds the session's
// own; Config.Roles holds one per role; SwitchModel takes a new one.
type ModelChoice struct {
	Model     llm.Model
	ModelName string
	// Profile is the endpoint profile Model is on ("" for the main
	// connection); it is stored with the session, so reopening it finds
	// its endpoint again.
	Profile string
	// ContextWindow is 0 for the known-model table.
	ContextWindow int
	// HitPrice and MissPrice (USD per million input tokens) price the
	// cache cost in compaction previews; zero means unknown.
	HitPrice, MissPrice float64
	// CacheRule is the provider's cache rule the cost estimates assume;
	// it is recorded with every ledger row ("" when unknown).
	CacheRule ledger.CacheRule
	// Vision says the model accepts images: the user's pictures are sent
	// and read_file shows image files (see images.go). Without it a
	// message with images is refused and no image is ever sent.
	Vision bool
	// PromptCacheKey sends the session's ID as prompt_cache_key with each
	// request (OpenAI's routing hint for its prompt cache, stable per
	// session); set it only for endpoints that accept the field.
	PromptCacheKey bool
}

// roleModel is the model the engine's calls of kind use: the role's own
// (Config.Roles) when one is set, the session's otherwise.
func (s *Session) roleModel(kind ledger.Kind) ModelChoice {
	if m, ok := s.cfg.Roles[kind]; ok && m.Model != nil && m.ModelName != "" {
		return m
	}
	return *s.model()
}

// model is the model the session talks to now (see Session.chosen). The
// value it points to is never changed: a switch stores a new one.
func (s *Session) model() *ModelChoice { return s.chosen.Load() }

// keyed returns req of kind tagged with its session and role (by which
// its effort is looked up) and with the session's ID as its prompt cache
// key when the endpoint takes one (ModelChoice.PromptCacheKey): the one
// place every request of the session gets them.
func (m ModelChoice) keyed(session string, kind ledger.Kind, req llm.Request) llm.Request {
	req.Session, req.Role = session, string(kind)
	if m.PromptCacheKey {
		req.CacheKey = session
	}
	return req
}

// modelLabel names a model with its profile for the ledger and people:
// "gpt-4o-mini" or "qwen3-8b (local)".
func modelLabel(name, profile string) string {
	if profile == "" {
		return name
	}
	return name + " (" + profile + ")"
}

// notePin records, when the model or profile the session talks to is not
// the one its stored header names, that the next request re-pins the
// provider's cache: the ledger's next turn row says so (Row.Repin). The
// caller holds s.mu or has not published the session yet.
func (s *Session) notePin(name, profile string) {
	if s.meta.Model == "" {
		s.meta.Model, s.meta.Profile = name, profile // never sent to a model yet: nothing to re-pin
		return
	}
	if s.meta.Model == name && s.meta.Profile == profile {
		return
	}
	s.st.Repin = modelLabel(s.meta.Model, s.meta.Profile) + " → " + modelLabel(name, profile)
	s.meta.Model, s.meta.Profile = name, profile
}

// ErrNoClient is returned by SwitchModel for a choice without a client.
var ErrNoClient = errors.New("the model to switch to has no client; configure its endpoint first")

// SwitchModel makes m the model the session talks to from its next
// request on, and remembers it as the session's own choice, so that
// reopening it keeps m unless one is chosen explicitly. Nothing already
// sent is rewritten; the provider's cache for m starts empty, so the next
// request is billed as a miss, and the ledger's next turn row records the
// switch. A switch between a model that sees images and one that does
// not renders the history again for the new one. It fails with ErrBusy
// while a turn or another operation runs.
func (s *Session) SwitchModel(m ModelChoice) error {
	if m.Model == nil || m.ModelName == "" {
		return ErrNoClient
	}
	end, ok := s.beginWork()
	if !ok {
		return ErrBusy
	}
	defer end()
	old := s.model()
	s.chosen.Store(&m)
	if m.ModelName == old.ModelName && m.Profile == old.Profile && m.Vision == old.Vision {
		return nil // a new client for the same model: nothing to re-pin
	}
	visionChanged := m.Vision != old.Vision
	s.env.Vision = m.Vision
	if visionChanged {
		entries := s.log.Entries()
		s.log = transcript.NewAppendLog(nil, wireRules(s.cfg.Store, m.Vision))
		for _, e := range entries {
			s.log.Append(e.Msg) // counts are reused where the wire form is the same
		}
		s.resetPrefix()
	}
	s.notePin(m.ModelName, m.Profile)
	s.meta.OwnModel = true
	// The tokenizer and the billing change with the model: the level is
	// estimated again until the new model's first usage anchors it.
	s.anchor.Invalidate()
	s.st.Anchor, s.st.Calibration = nil, nil
	err := s.saveMeta()
	s.publish() // the session talks to m now, stored or not
	if err != nil {
		return fmt.Errorf("the session talks to %s now, but the switch could not be stored, so reopening it may go back (%w)", m.ModelName, err)
	}
	return nil
}
