#!/usr/bin/env bash
# Smoke test placeholder until the desktop window lands: runs the built
# binary's help so a broken build or link fails here.
set -euo pipefail
cd "$(dirname "$0")/.."
./tally help >/dev/null
echo "smoke: ok"
