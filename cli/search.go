package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/text"
)

// cmdSearch is `tally search QUERY [--json] [--reindex]`: the hits of
// the app's search (Ctrl+K) across every session, one a line: the
// session, the cycle, the message's position in its cycle (from 0, as in
// `tally export`) and a snippet; with --json one workbench.SearchHit
// object a line. --reindex first builds the search index again from the
// sessions' history (QUERY may then be left out).
func cmdSearch(args []string, stdout, stderr io.Writer) error {
	reindex, rest, err := takeReindex(args)
	if err != nil {
		return err
	}
	o, err := parse("search", rest, stderr)
	if err != nil {
		return err
	}
	query := strings.Join(o.args, " ")
	if strings.TrimSpace(query) == "" && !reindex {
		return usagef("tally search: give the words to look for, e.g. `tally search mul overflow`")
	}
	w, _, err := o.open()
	if err != nil {
		return err
	}
	defer w.Close()
	if reindex {
		if err := w.ReindexSearch(); err != nil {
			return fmt.Errorf("tally search: the search index could not be rebuilt (%w)", err)
		}
		if strings.TrimSpace(query) == "" {
			fmt.Fprintln(stderr, "tally search: the search index was rebuilt")
			return nil
		}
	}
	hits, truncated, err := w.Search(query)
	if err != nil {
		return err
	}
	for _, h := range hits {
		if o.json {
			b, err := json.Marshal(h)
			if err != nil {
				return fmt.Errorf("tally search: a hit in session %s cannot be encoded (%w); the store may be damaged", h.Session, err)
			}
			if _, err := stdout.Write(safeJSON(append(b, '\n'))); err != nil {
				return err
			}
			continue
		}
		if _, err := io.WriteString(stdout, safeText(searchLine(h))+"\n"); err != nil {
			return err
		}
	}
	if truncated {
		fmt.Fprintf(stderr, "tally search: only the first %d hits are shown; add a word to narrow the search\n", len(hits))
	}
	return nil
}

// searchLine is a hit's plain line: session, cycle, message, snippet,
// separated by tabs ("title" and "-" in place of the cycle and message
// when the session's title matched).
func searchLine(h workbench.SearchHit) string {
	where, msg := fmt.Sprintf("cycle %d", h.Cycle), fmt.Sprintf("message %d", h.Index)
	switch {
	case h.Cycle == 0:
		where, msg = "title", "-"
	case h.Superseded:
		msg += " (superseded)"
	case !h.Current:
		msg += " (archived)"
	}
	return text.OneLine(h.Session, 0) + "\t" + where + "\t" + msg + "\t" + text.OneLine(h.Snippet, 0)
}

// takeReindex takes --reindex out of args, before the shared flags are
// parsed.
func takeReindex(args []string) (reindex bool, rest []string, err error) {
	for i, a := range args {
		if a == "--" {
			return reindex, append(rest, args[i:]...), nil
		}
		switch a {
		case "--reindex", "-reindex", "--reindex=true", "-reindex=true":
			reindex = true
		case "--reindex=false", "-reindex=false":
			reindex = false
		default:
			if strings.HasPrefix(strings.TrimLeft(a, "-"), "reindex=") && strings.HasPrefix(a, "-") {
				return false, nil, usagef("tally search: --reindex takes no value, not %q", a)
			}
			rest = append(rest, a)
		}
	}
	return reindex, rest, nil
}
