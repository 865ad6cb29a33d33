# Sourced by setup.sh and run.sh from the repository's root: the versions
# of what the real-model checks fetch, and where each is kept. A new
# version is fetched or built afresh into a folder of its own.
SMOLLM2_VERSION=${SMOLLM2_VERSION:-0.1.2}
LLAMA_CPP_PYTHON_VERSION=${LLAMA_CPP_PYTHON_VERSION:-0.3.36}
REALMODEL_ROOT=$PWD/.tools/realmodel
REALMODEL_MODEL=$REALMODEL_ROOT/smollm2-$SMOLLM2_VERSION/SmolLM2-135M-Instruct.Q4_1.gguf
# llama-server is built for this CPU's instruction set (GGML_NATIVE) with
# the recipe of setup.sh and lean.cmake: its folder names the package
# version, the recipe's revision and a digest of the CPU's flags, so a
# .tools/ copied to another kind of CPU, or a changed recipe, builds
# afresh instead of running a binary that does not fit.
REALMODEL_RECIPE=lean1
REALMODEL_CPU=$( (grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || uname -m) | cksum | cut -d' ' -f1)
REALMODEL_SERVER=$REALMODEL_ROOT/llama-server-$LLAMA_CPP_PYTHON_VERSION-$REALMODEL_RECIPE-$REALMODEL_CPU/llama-server
