package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tally-dev/tally/engine/images"
	"github.com/tally-dev/tally/internal/text"
)

// readImages reads the files of tally run --image, checks that each is an
// image Tally sends (images.Check) and tells stderr what each is and its
// estimated cost in tokens. Nothing is opened or stored yet.
func readImages(paths []string, stderr io.Writer) ([]images.Input, error) {
	if len(paths) > images.MaxPerMessage {
		return nil, usagef("tally run: %d --image files, more than the %d one message may carry; send them in several runs with --session", len(paths), images.MaxPerMessage)
	}
	var out []images.Input
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("tally run: --image %s cannot be read (%v); give the path of an image file", safeText(p), message(err))
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("tally run: --image %s is not a regular file; give the path of an image file", safeText(p))
		}
		if fi.Size() > images.MaxBytes {
			return nil, fmt.Errorf("tally run: --image %s is %s, over the %s limit for an image; make it smaller (crop it or save it as JPEG) and try again", safeText(p), images.SizeText(int(min(fi.Size(), 1<<40))), images.SizeText(images.MaxBytes))
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("tally run: --image %s cannot be read (%v); give the path of an image file", safeText(p), message(err))
		}
		info, err := images.Check(safeText(p), data)
		if err != nil {
			return nil, fmt.Errorf("tally run: --image %w", err)
		}
		fmt.Fprintf(stderr, "image %s: %s, about %s tokens\n", safeText(p), info, text.Thousands(info.Tokens()))
		out = append(out, images.Input{Name: filepath.Base(p), Data: data})
	}
	return out, nil
}
