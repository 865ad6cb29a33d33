package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// exportLine is one line of `tally export`.
type exportLine struct {
	Session string             `json:"session"`
	Cycle   int                `json:"cycle"`
	Seq     uint64             `json:"seq"`
	Message transcript.Message `json:"message"`
}

func cmdExport(args []string, stdout, stderr io.Writer) error {
	o, err := parse("export", args, stderr)
	if err != nil {
		return err
	}
	id, err := needSession("export", o)
	if err != nil {
		return err
	}
	st, err := o.openStore()
	if err != nil {
		return err
	}
	defer st.Close()
	enc := json.NewEncoder(stdout)
	return st.View(func(tx *storage.Tx) error {
		if _, err := tx.Session(id); err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return fmt.Errorf("tally export: no session with ID %q; run `tally sessions` to list them", id)
			}
			return err
		}
		cycles, err := tx.Cycles(id)
		if err != nil {
			return err
		}
		for _, c := range cycles {
			recs, err := tx.Log(id, c)
			if err != nil {
				return err
			}
			for _, r := range recs {
				m, err := transcript.Decode(r.Data)
				if err != nil {
					return fmt.Errorf("tally export: cycle %d message %d: %w", c, r.Seq, err)
				}
				if err := enc.Encode(exportLine{id, c, r.Seq, m}); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
