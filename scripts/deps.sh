#!/usr/bin/env bash
# Installs what Tally needs to build and test on Debian/Ubuntu: the C
# libraries Fyne's cgo build links against, Xvfb and X tools for the
# window smoke test, curl for the MCP conformance run, npm (which then
# fetches the pinned Node.js 22 and the npm tools the tests drive), and the
# Go modules. Safe to run repeatedly: it only installs what is missing.
set -euo pipefail

packages=(gcc pkg-config libgl1-mesa-dev xorg-dev xvfb xdotool x11-utils imagemagick curl)

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
# npm from anywhere (nvm, a tarball) will do; only without one is
# Debian's asked for.
command -v npm >/dev/null || missing+=(npm)

if ((${#missing[@]} > 0)); then
	echo "Installing Debian packages: ${missing[*]}"
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		if command -v sudo >/dev/null; then
			sudo="sudo"
		else
			echo "error: need root or sudo to install ${missing[*]}; install them and run again" >&2
			exit 1
		fi
	fi
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ! command -v go >/dev/null; then
	echo "error: Go is not installed; install Go 1.26 or newer from your distribution or go.dev and run again" >&2
	exit 1
fi

go mod download

# Language servers for engine/lsp's tests and benchmarks, kept in .tools/
# of the repository (ignored by git) so nothing of the user's is touched:
# gopls built with Go, pyright and typescript-language-server from npm.
# Their versions are pinned in engine/lsp/versions.txt, the list
# `tally lsp install` installs from too (typescript-language-server only on
# Node 20 or newer). Without npm the two Node servers are skipped and
# their tests skip.
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/.tools"
# server_packages NAME prints the pinned packages of the server NAME.
server_packages() {
	awk -v name="$1" '$1 == name { for (i = 3; i <= NF; i++) print $i }' "$root/engine/lsp/versions.txt"
}
gopls_package="$(server_packages gopls)"
gopls_version="${gopls_package##*@}"
if ! "$tools/bin/gopls" version 2>/dev/null | grep -q "gopls $gopls_version\$"; then
	echo "Installing gopls $gopls_version into .tools/bin"
	GOBIN="$tools/bin" go install "$gopls_package"
fi
mapfile -t npm_packages < <(server_packages pyright)
if node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' 2>/dev/null; then
	mapfile -t -O "${#npm_packages[@]}" npm_packages < <(server_packages typescript-language-server)
elif command -v npm >/dev/null; then
	echo "note: typescript-language-server needs Node.js 20 or newer, so it is skipped and its tests will skip"
fi
if command -v npm >/dev/null; then
	have_all=1
	for p in "${npm_packages[@]}"; do
		name="${p%@*}" want="${p##*@}"
		got="$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$tools/npm/node_modules/$name/package.json" 2>/dev/null | head -n 1 || true)"
		[ "$got" = "$want" ] || have_all=0
	done
	if [ "$have_all" = 0 ]; then
		echo "Installing ${npm_packages[*]} into .tools/npm"
		npm install --silent --no-audit --no-fund --prefix "$tools/npm" "${npm_packages[@]}"
	fi
else
	echo "note: npm is not installed, so pyright and typescript-language-server are skipped and their tests will skip; install Node.js and npm to run them"
fi
