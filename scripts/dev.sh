#!/usr/bin/env bash
# Entry point for a fresh machine: installs make and a C compiler when they
# are missing (Debian/Ubuntu, as root or with sudo), then runs the Makefile
# target given, e.g. `bash scripts/dev.sh run` or `bash scripts/dev.sh test`.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v make >/dev/null || need+=(make)
command -v gcc >/dev/null || need+=(gcc)
if ((${#need[@]} > 0)); then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
exec make "${@:-run}"
