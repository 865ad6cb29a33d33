package cli

import (
	"fmt"
	"io"
)

func cmdExport(args []string, stdout, stderr io.Writer) error {
	_, id, w, err := openSessionStore("export", args, stderr, false)
	if err != nil {
		return err
	}
	defer w.Close()
	var writeErr error
	err = w.Export(id, func(line []byte) error {
		_, writeErr = stdout.Write(line)
		return writeErr
	})
	if writeErr != nil {
		return writeErr
	}
	if err != nil {
		return fmt.Errorf("tally export: %w", err)
	}
	return nil
}
