package workbench

import (
	"context"

	"github.com/tally-dev/tally/engine/mcp"
)

// ProbeMCPAll is ProbeMCP that also lists the server's prompts (the slash
// commands of a session) and resources (its "@server:uri" attachments):
// it starts the server sc under name in workspace ws ("" for the current
// folder) as ProbeMCP does, lists what it offers and stops it, for `tally
// mcp list --probe`. The error says why the server failed, in one
// sentence.
func ProbeMCPAll(ctx context.Context, name string, sc mcp.ServerConfig, ws string) (mcp.Probed, error) {
	opts, err := probeOptions(sc, ws)
	if err != nil {
		return mcp.Probed{}, err
	}
	return mcp.ProbeAll(ctx, name, sc, opts)
}
