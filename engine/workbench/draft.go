package workbench

import "unicode/utf8"

// draftKey is the per-session state entry holding the unsent prompt.
const draftKey = "draft"

// MaxDraft caps a stored draft in bytes; a longer one is cut at a rune
// boundary (a prompt that long belongs in a file the agent reads).
const MaxDraft = 256 << 10

// SaveDraft stores the unsent prompt of session id so it is restored when
// the session is reopened, also after a restart; an empty text removes it.
func (w *Workbench) SaveDraft(id, text string) error {
	if text == "" {
		return w.store.DeleteState(id, draftKey)
	}
	if len(text) > MaxDraft {
		cut := MaxDraft
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	return w.store.PutState(id, draftKey, []byte(text))
}

// Draft returns the stored unsent prompt of session id, "" when there is
// none.
func (w *Workbench) Draft(id string) (string, error) {
	b, err := w.store.State(id, draftKey)
	return string(b), err
}
