# Sourced by setup.sh and run.sh from the repository's root: the versions
# of what the real-model checks fetch, and where each is kept. A new
# version is fetched or built afresh into a folder of its own.
SMOLLM2_VERSION=${SMOLLM2_VERSION:-0.1.2}
LLAMA_CPP_PYTHON_VERSION=${LLAMA_CPP_PYTHON_VERSION:-0.3.36}
REALMODEL_ROOT=$PWD/.tools/realmodel
REALMODEL_MODEL=$REALMODEL_ROOT/smollm2-$SMOLLM2_VERSION/SmolLM2-135M-Instruct.Q4_1.gguf
REALMODEL_SERVER=$REALMODEL_ROOT/llama-server-$LLAMA_CPP_PYTHON_VERSION/llama-server
