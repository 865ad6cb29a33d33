#!/usr/bin/env bash
# Installs what Tally needs to build and test on Debian/Ubuntu: the C
# libraries Fyne's cgo build links against, Xvfb and X tools for the
# window smoke test, and the Go modules. Safe to run repeatedly: it only
# installs what is missing.
set -euo pipefail

packages=(gcc pkg-config libgl1-mesa-dev xorg-dev xvfb xdotool x11-utils imagemagick)

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done

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
