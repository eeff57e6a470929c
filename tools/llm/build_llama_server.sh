#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` (the OpenAI-compatible HTTP server) from source, for the
# tests in tests/llm_real that run the `llm` agent kind against a real model server.
#
# Debian ships no llama.cpp package, but the llama-cpp-python source distribution on PyPI
# carries the llama.cpp sources under vendor/llama.cpp; only the llama-server target is built,
# statically and without anything that would reach the network (web UI, curl, OpenSSL).
#
# The binary is cached outside the repository, keyed by version, so a machine builds it once:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/review-gate/llama-server-<version>/llama-server
#
# Usage: build_llama_server.sh [--print-path]
#   --print-path  print the cache path of the binary and exit (whether or not it exists)
# Environment: LLAMA_CPP_PYTHON_VERSION (default below), PYTHON (a python with pip; default python3),
#              BUILD_JOBS (default: number of cores).
set -euo pipefail

VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
CACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/review-gate/llama-server-${VERSION}"
BINARY="${CACHE_DIR}/llama-server"

case "${1:-}" in
  --print-path) echo "$BINARY"; exit 0 ;;
  "") ;;
  *) echo "usage: $0 [--print-path]" >&2; exit 2 ;;
esac

if [[ -x "$BINARY" ]]; then
  echo "$BINARY"
  exit 0
fi

log() { echo "build_llama_server: $*" >&2; }

# Build tools, from Debian, only when missing.
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v ninja >/dev/null 2>&1 || missing+=(ninja-build)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
if ((${#missing[@]})); then
  log "installing ${missing[*]} with apt-get"
  sudo_cmd=()
  if [[ "$(id -u)" != 0 ]]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PYTHON="${PYTHON:-python3}"
JOBS="${BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}"

work="$(mktemp -d "${TMPDIR:-/tmp}/llama-server-build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
trap 'exit 143' INT TERM

log "downloading llama-cpp-python ${VERSION} (source distribution)"
"$PYTHON" -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: \
  -d "$work" "llama-cpp-python==${VERSION}"
sdist="$(find "$work" -maxdepth 1 -name 'llama_cpp_python-*.tar.gz' | head -n 1)"
[[ -n "$sdist" ]] || { log "no source distribution downloaded"; exit 1; }
tar -xzf "$sdist" -C "$work"
src="$(find "$work" -maxdepth 3 -type d -path '*/vendor/llama.cpp' | head -n 1)"
[[ -n "$src" && -f "$src/CMakeLists.txt" ]] || { log "vendor/llama.cpp not found in $sdist"; exit 1; }

log "configuring ($src)"
cmake -S "$src" -B "$work/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=OFF \
  -DGGML_NATIVE=OFF \
  -DGGML_OPENMP=OFF \
  -DLLAMA_CURL=OFF \
  -DLLAMA_OPENSSL=OFF \
  -DLLAMA_BUILD_UI=OFF \
  -DLLAMA_USE_PREBUILT_UI=OFF \
  -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF \
  -DLLAMA_BUILD_TOOLS=ON \
  -DLLAMA_BUILD_SERVER=ON \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log" >&2; exit 1; }

log "building llama-server with ${JOBS} jobs (several minutes)"
start=$SECONDS
cmake --build "$work/build" --target llama-server -j "$JOBS" >"$work/build.log" 2>&1 \
  || { tail -n 60 "$work/build.log" >&2; exit 1; }
log "built in $((SECONDS - start)) s"

built="$(find "$work/build" -type f -name llama-server -perm -u+x | head -n 1)"
[[ -n "$built" ]] || { log "llama-server binary not found after the build"; exit 1; }

# Install atomically, so a concurrent or interrupted run never leaves a half-written binary.
mkdir -p "$CACHE_DIR"
cp "$built" "$CACHE_DIR/.llama-server.$$"
chmod 755 "$CACHE_DIR/.llama-server.$$"
mv -f "$CACHE_DIR/.llama-server.$$" "$BINARY"
echo "$BINARY"
