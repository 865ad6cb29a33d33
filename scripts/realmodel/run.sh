#!/usr/bin/env bash
# The real-model checks (make realmodel): Tally's own binary against
# SmolLM2-135M-Instruct served by llama.cpp's llama-server on 127.0.0.1.
# setup.sh fetches the model and builds llama-server once into
# .tools/realmodel; this script builds tally, then runs the checks of
# scripts/realmodel (Go tests behind the realmodel build tag), which start
# llama-server on a free port with --jinja, a fixed seed, temperature 0
# and its prompt cache on, wait for /health and stop it at the end. The
# tables go to artifacts/realmodel/.
#
# Usage: bash scripts/realmodel/run.sh [--short] [go test flags...]
#   --short   the form `make test` runs: one turn of two requests, the
#             wire and the prompt cache checked. On a fresh clone it
#             fetches the model and builds llama-server first, as the
#             long form does (a few minutes on two cores, see
#             docs/realmodel.md); later runs find both in .tools/realmodel.
set -euo pipefail
cd "$(dirname "$0")/../.."

short=""
if [ "${1:-}" = "--short" ]; then
	short=1
	shift
fi
fail() { echo "realmodel: $*" >&2; exit 1; }

. scripts/realmodel/paths.sh
bash scripts/realmodel/setup.sh

out=artifacts/realmodel
mkdir -p "$out"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/tally" . || fail "tally did not build"

export REALMODEL_SERVER REALMODEL_MODEL
export REALMODEL_TALLY=$bin/tally
REALMODEL_OUT=$PWD/$out
export REALMODEL_OUT

if [ -n "$short" ]; then
	REALMODEL_SHORT=1 go test -tags realmodel -count=1 -timeout 15m -run '^TestWire$' -v ./scripts/realmodel/ "$@"
else
	go test -tags realmodel -count=1 -timeout 120m -v ./scripts/realmodel/ "$@"
fi
echo "realmodel: tables in $out/"
