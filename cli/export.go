package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/tally-dev/tally/engine/workbench"
)

// cmdExport runs `tally export SESSION [--format jsonl|md|html]`: the
// session's whole history as JSON lines (the default), or as a Markdown
// or HTML document to share.
func cmdExport(args []string, stdout, stderr io.Writer) error {
	format, args, err := takeValue(args, "format")
	if err != nil {
		return usagef("tally export: %v", err)
	}
	_, id, w, err := openSessionStore("export", args, stderr, false)
	if err != nil {
		return err
	}
	defer w.Close()
	var writeErr error
	err = w.ExportDocument(id, strings.ToLower(format), writerFunc(func(p []byte) (int, error) {
		n, err := stdout.Write(p)
		if err != nil {
			writeErr = err
		}
		return n, err
	}))
	if writeErr != nil {
		return writeErr
	}
	if err != nil {
		return fmt.Errorf("tally export: %w", err)
	}
	return nil
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// takeValue removes the flag --name VALUE (or --name=VALUE) from args and
// returns its value ("" when absent).
func takeValue(args []string, name string) (string, []string, error) {
	var out []string
	value := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return value, append(out, args[i:]...), nil
		case a == "--"+name || a == "-"+name:
			if i+1 >= len(args) {
				return "", nil, fmt.Errorf("--%s needs a value (one of %s, %s, %s)", name, workbench.FormatJSONL, workbench.FormatMarkdown, workbench.FormatHTML)
			}
			value = args[i+1]
			i++
		case strings.HasPrefix(a, "--"+name+"=") || strings.HasPrefix(a, "-"+name+"="):
			value = a[strings.Index(a, "=")+1:]
		default:
			out = append(out, a)
		}
	}
	return value, out, nil
}
