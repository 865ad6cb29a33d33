package cli

import (
	"fmt"
	"strings"

	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/internal/text"
)

// page answers a server's request to open a page in the browser (URL
// mode). On a terminal it shows the whole URL and its host and asks
// whether the user opened it (Tally never opens it itself); --yes and a
// command without a terminal decline it, since no one is there to open
// it.
func (a *formAnswerer) page(f mcp.Form) (mcp.Reply, error) {
	server, what := safeText(f.Server), safeText(text.OneLine(f.Message, quoteRunes))
	if a.term == nil {
		why := "standard input is not a terminal to ask on"
		if a.yes {
			why = "--yes does not open pages"
		}
		fmt.Fprintf(a.out, "%s: the MCP server %q asks you to open a page (%q), but %s, so it was declined; run on a terminal to see it\n", a.cmd, server, what, why)
		return mcp.Declined, nil
	}
	t := a.term
	t.turn.Lock()
	defer t.turn.Unlock()
	fmt.Fprintf(t.out, "\nThe MCP server %q asks you to open a page in your browser:\n", server)
	for line := range strings.SplitSeq(strings.TrimSpace(f.Message), "\n") {
		fmt.Fprintf(t.out, "  %s\n", safeText(line))
	}
	fmt.Fprintf(t.out, "  %s\n  (host: %s; Tally does not open it for you, and nothing you type there passes through Tally)\n", safeText(f.URL), safeText(f.Host()))
	switch a.choose("Open it yourself, then answer: [y]es, I opened it / [n]o, decline / [c]ancel: ", false, "page") {
	case mcp.ActionAccept:
		return mcp.Reply{Action: mcp.ActionAccept}, nil
	case mcp.ActionDecline:
		return mcp.Declined, nil
	}
	return mcp.Cancelled, nil
}
