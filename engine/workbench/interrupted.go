package workbench

// interruptedKey is the per-session state entry saying that the app closed
// while a turn of the session ran.
const interruptedKey = "interrupted"

// SetInterrupted records why session id's running turn was cut short when
// the app closed (a sentence for the person, shown when the session is
// opened again); an empty note removes the record.
func (w *Workbench) SetInterrupted(id, note string) error {
	if note == "" {
		return w.store.DeleteState(id, interruptedKey)
	}
	return w.store.PutState(id, interruptedKey, []byte(note))
}

// Interrupted returns the note SetInterrupted recorded for session id, ""
// when its last turn was not cut short by closing the app.
func (w *Workbench) Interrupted(id string) (string, error) {
	b, err := w.store.State(id, interruptedKey)
	return string(b), err
}
