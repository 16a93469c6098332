#!/usr/bin/env bash
# Packs what the GPU machine needs into .carry/ (git-ignored): the built binaries and slangc.
# The Vulkan loader debs live in .gl/ and the validation layers deb in .carry/ (see docs/platforms.md).
#   scripts/device/pack.sh                    # sdgen, every test binary and bench
#   scripts/device/pack.sh BINARY...          # only these (what travels is limited to 64 MiB in all)
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .carry
bins=(build/default/app/sdgen "$@")
[ $# -eq 0 ] && [ -f build/default/app/libsdgen_cudnn_reference.so ] && bins+=(build/default/app/libsdgen_cudnn_reference.so)
[ $# -eq 0 ] && for t in build/default/tests/*_tests build/default/tests/*/*_tests build/default/tests/model_check/sdgen_model_check; do
  [ -x "$t" ] && bins+=("$t")
done
[ $# -eq 0 ] && [ -d build/default/bench ] && for b in build/default/bench/*; do [ -x "$b" ] && [ -f "$b" ] && bins+=("$b"); done
# Stripped copies travel (debug info is ~85 % of each binary; the carry limit is 64 MiB with the tree).
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
for b in "${bins[@]}"; do
  mkdir -p "$stage/$(dirname "$b")"
  strip -o "$stage/$b" "$b" 2>/dev/null || cp "$b" "$stage/$b"
done
mkdir -p "$stage/tools" && cp -r tools/slang "$stage/tools/"
# Debian libraries the binaries link that the GPU machine's image lacks (sdgen serve: cpp-httplib and brotli);
# vulkan-env.sh puts lib/ on LD_LIBRARY_PATH. System libraries (libc, libssl, libz) stay the machine's own.
mkdir -p "$stage/lib"
ldd "${bins[@]}" 2>/dev/null | awk '/libcpp-httplib|libbrotli/ {print $3}' | sort -u | xargs -r cp -L -t "$stage/lib"
tar -cJf .carry/bundle.tar.xz -C "$stage" "${bins[@]}" tools/slang lib
ls -la .carry
