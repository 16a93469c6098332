#!/bin/sh
# The GUI end to end: sdgen-gui under Xvfb with the CPU Vulkan driver (lavapipe) generates with the built-in model
# in scripted mode, writes a screenshot and the result PNG; gui_screenshot_check then compares the two.
# The same generation through the sdgen command line must give the same PNG pixels and parameters.
# Usage: run_gui_test.sh SDGEN_GUI SCREENSHOT_CHECK SDGEN OUTPUT_DIR
# Fails (never skips) when anything is missing: the test exists only when sdgen-gui was built.
set -u
gui=$1 check=$2 cli=$3 out=$4
mkdir -p "$out" && rm -f "$out/screenshot.png" "$out/preview.png" "$out/result.png" "$out/cli.png"
if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "FAILED: xvfb-run is not installed (Debian: apt-get install xvfb); sdgen-gui was built, so it must be tested"
  exit 1
fi
# lavapipe presents to Xvfb (through X11 image transfers); a hardware driver would not, so use it when present.
for icd in /usr/share/vulkan/icd.d/lvp_icd.*.json; do
  [ -f "$icd" ] && export VK_DRIVER_FILES="$icd" VK_ICD_FILENAMES="$icd"
done
prompt="a large yellow square in the center on a blue background"
xvfb-run -a -s "-screen 0 1280x800x24" "$gui" --window-size 1280x800 --auto-generate --prompt "$prompt" \
  --seed 7 --steps 4 --screenshot "$out/screenshot.png" --preview-screenshot 2:"$out/preview.png" --save-image "$out/result.png" --exit-after --timeout 240 \
  >"$out/stdout.txt" 2>"$out/stderr.txt"
code=$?
cat "$out/stdout.txt"
cat "$out/stderr.txt" >&2
if [ $code -ne 0 ]; then
  echo "FAILED: sdgen-gui exited with code $code"
  exit 1
fi
if ! "$cli" -p "$prompt" -s 7 --steps 4 -o "$out/cli.png"; then
  echo "FAILED: sdgen (the command line) could not make the reference image"
  exit 1
fi
rect=$(sed -n 's/^sdgen-gui: image-rect //p' "$out/stdout.txt")
if [ -z "$rect" ]; then
  echo "FAILED: sdgen-gui did not report where it drew the image"
  exit 1
fi
preview=$(sed -n 's/^sdgen-gui: preview-rect //p' "$out/stdout.txt")
if [ -z "$preview" ]; then
  echo "FAILED: sdgen-gui did not show a live preview"
  exit 1
fi
# shellcheck disable=SC2086 # the rectangles are four numbers
"$check" --preview "$out/preview.png" $preview || exit 1
# shellcheck disable=SC2086
"$check" "$out/screenshot.png" "$out/result.png" $rect "$out/cli.png" "$prompt" "Steps: 4," "Seed: 7," "Model: sdgen-tiny" || exit 1

# Image to image: the first result as the init image (docs/img2img.md); the same run on the command line must
# give the same PNG.
rm -f "$out/i2i-screenshot.png" "$out/i2i-result.png" "$out/i2i-cli.png"
prompt2="a small red circle on a green background"
xvfb-run -a -s "-screen 0 1280x800x24" "$gui" --window-size 1280x800 --auto-generate --prompt "$prompt2" \
  --seed 8 --steps 4 --init-img "$out/result.png" --strength 0.6 --screenshot "$out/i2i-screenshot.png" \
  --save-image "$out/i2i-result.png" --exit-after --timeout 240 >"$out/i2i-stdout.txt" 2>"$out/i2i-stderr.txt"
code=$?
cat "$out/i2i-stdout.txt"
cat "$out/i2i-stderr.txt" >&2
if [ $code -ne 0 ]; then
  echo "FAILED: sdgen-gui (image to image) exited with code $code"
  exit 1
fi
if ! "$cli" -p "$prompt2" -s 8 --steps 4 -i "$out/result.png" --strength 0.6 -o "$out/i2i-cli.png"; then
  echo "FAILED: sdgen (the command line) could not make the image-to-image reference"
  exit 1
fi
rect=$(sed -n 's/^sdgen-gui: image-rect //p' "$out/i2i-stdout.txt")
if [ -z "$rect" ]; then
  echo "FAILED: sdgen-gui did not report where it drew the image-to-image result"
  exit 1
fi
# shellcheck disable=SC2086
"$check" "$out/i2i-screenshot.png" "$out/i2i-result.png" $rect "$out/i2i-cli.png" "$prompt2" "Seed: 8," \
  "Denoising strength: 0.6," "Model: sdgen-tiny"
