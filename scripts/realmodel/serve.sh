#!/usr/bin/env bash
# Serves SmolLM2 through llama-server on 127.0.0.1 for Tally: fetches the
# model and builds llama-server once (setup.sh), starts the server with
# the settings the real-model checks use, with tool calls
# (chatml-tools.jinja), prints the base URL on the first line of standard
# output and serves until interrupted (Ctrl+C), when it stops the server.
# Usage: bash scripts/realmodel/serve.sh [--quiet] [--ctx-size N]
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/realmodel/setup.sh
. scripts/realmodel/paths.sh
exec go run ./scripts/realmodel/serve --server "$REALMODEL_SERVER" --model "$REALMODEL_MODEL" \
	--template scripts/realmodel/chatml-tools.jinja "$@"
