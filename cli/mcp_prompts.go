package cli

import (
	"cmp"
	"fmt"
	"io"

	"github.com/tally-dev/tally/engine/command"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/internal/text"
)

// printPromptsAndResources lists a probed server's prompts, as the slash
// commands they are in a session (`tally run "/server:prompt args"`), and
// its resources, as the "@server:uri" tokens that attach them.
func printPromptsAndResources(w io.Writer, prompts []mcp.Prompt, resources []mcp.Resource) {
	for _, p := range prompts {
		c := command.PromptCommand(p)
		line := "  " + safeText(c.Usage())
		if c.Description != "" {
			line += ": " + safeText(text.FirstLine(c.Description, quoteRunes))
		}
		fmt.Fprintln(w, line)
	}
	for _, r := range resources {
		line := "  " + safeText(mcp.ResourceToken(r))
		if r.Template {
			line += " (template)"
		}
		if r.MIMEType != "" {
			line += " (" + safeText(r.MIMEType) + ")"
		}
		if about := text.FirstLine(cmp.Or(r.Description, r.Title, r.Name), quoteRunes); about != "" {
			line += ": " + safeText(about)
		}
		fmt.Fprintln(w, line)
	}
}
