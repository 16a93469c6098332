#!/usr/bin/env bash
# Idempotent setup: installs only the Debian packages that are missing (nginx: the serve tests run it from a
# temporary prefix in front of two servers; its package's own service is not needed) and Slang's compiler
# (from the slangtorch wheel on PyPI) into the git-ignored tools/ folder, and the serve tests' Python venv
# (scripts/serve-test-env.sh: webuiapi, requests, Pillow from PyPI), and spirv-opt's library from the slangpy
# wheel (below). Downloads nothing else.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

packages=(
  build-essential cmake pkg-config python3 python3-pip python3-venv unzip
  libvulkan-dev vulkan-validationlayers mesa-vulkan-drivers vulkan-tools
  libglfw3-dev libimgui-dev libstb-dev libsentencepiece-dev nlohmann-json3-dev
  libgtest-dev xvfb libcpp-httplib-dev nginx zlib1g-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=(); [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

slang_version="1.3.22"   # slangtorch wheel version; ships slangc and libslang-compiler for Linux x86-64
slang_dir="$root/tools/slang"
if [ ! -x "$slang_dir/bin/slangc" ] || [ "$(cat "$slang_dir/wheel-version" 2>/dev/null)" != "$slang_version" ]; then
  echo "setup: fetching slangc from slangtorch==$slang_version"
  tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
  py=python3; command -v "$py" >/dev/null || py=python
  "$py" -m pip download --quiet --no-deps "slangtorch==$slang_version" -d "$tmp"
  rm -rf "$slang_dir"; mkdir -p "$slang_dir"
  unzip -q -o "$tmp"/slangtorch-*.whl 'slangtorch/bin/*' -d "$tmp/x"
  mv "$tmp/x/slangtorch/bin" "$slang_dir/bin"
  chmod +x "$slang_dir/bin/slangc"
  echo "$slang_version" > "$slang_dir/wheel-version"
fi
if ! "$slang_dir/bin/slangc" -v >/dev/null 2>&1; then
  echo "setup: error: $slang_dir/bin/slangc does not run" >&2; exit 1
fi
# spirv-opt for the few kernels measured faster through it (KernelSource::optimize; docs/architecture.md):
# slangc loads it from libslang-glslang-<its version>.so beside itself, which the slangtorch wheel lacks. The
# slangpy wheel ships the library of Slang 2026.12; slangc 2026.14.1 loads it under its own name (the interface
# is unchanged between the two; checked here by compiling a kernel at -O2). Without it those kernels compile at
# -O0 (slower, same results) and sdgen says so once.
glslang_wheel="slangpy==0.43.1"
glslang_lib="$slang_dir/bin/libslang-glslang-$("$slang_dir/bin/slangc" -v 2>&1 | head -1 | tr -d '[:space:]').so"
if [ ! -f "$glslang_lib" ] && [ "${SDGEN_NO_SPIRV_OPT:-0}" != 1 ]; then
  echo "setup: fetching spirv-opt (libslang-glslang) from $glslang_wheel"
  gtmp="$(mktemp -d)"
  py=python3; command -v "$py" >/dev/null || py=python
  if "$py" -m pip download --quiet --no-deps "$glslang_wheel" --only-binary=:all: --python-version 3.11 \
       --platform manylinux_2_34_x86_64 -d "$gtmp" &&
     unzip -q -o "$gtmp"/slangpy-*.whl 'slangpy/libslang-glslang-*.so' -d "$gtmp/x"; then
    cp "$gtmp"/x/slangpy/libslang-glslang-*.so "$glslang_lib"
    printf 'RWStructuredBuffer<float> b;\n[shader("compute")][numthreads(32,1,1)]\nvoid main(uint3 t : SV_DispatchThreadID) { b[t.x] = b[t.x] * 2.0; }\n' > "$gtmp/t.slang"
    if ! "$slang_dir/bin/slangc" "$gtmp/t.slang" -entry main -stage compute -target spirv -O2 -o "$gtmp/t.spv" >/dev/null 2>&1; then
      echo "setup: warning: spirv-opt from $glslang_wheel does not load; kernels stay at -O0" >&2
      rm -f "$glslang_lib"
    fi
  else
    echo "setup: warning: could not fetch $glslang_wheel; kernels stay at -O0" >&2
  fi
  rm -rf "$gtmp"
fi
# sdgen serve's API tests talk to the server with requests and the PyPI client webuiapi, from a git-ignored venv.
bash "$root/scripts/serve-test-env.sh"
echo "setup: ok (slangc $("$slang_dir/bin/slangc" -v 2>&1 | head -1))"
