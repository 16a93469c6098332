#!/bin/sh
# The GUI end to end: sdgen-gui under Xvfb with the CPU Vulkan driver (lavapipe) generates with the built-in model
# in scripted mode, writes a screenshot and the result PNG; gui_screenshot_check then compares the two.
# The same generation through the sdgen command line must give the same PNG pixels and parameters.
# Usage: run_gui_test.sh SDGEN_GUI SCREENSHOT_CHECK SDGEN OUTPUT_DIR
# Fails (never skips) when anything is missing: the test exists only when sdgen-gui was built.
set -u
gui=$1 check=$2 cli=$3 out=$4
mkdir -p "$out" && rm -f "$out/preview.png" "$out/result.png" "$out/cli.png"
if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "FAILED: xvfb-run is not installed (Debian: apt-get install xvfb); sdgen-gui was built, so it must be tested"
  exit 1
fi
# lavapipe presents to Xvfb (through X11 image transfers); a hardware driver would not, so use it when present.
for icd in /usr/share/vulkan/icd.d/lvp_icd.*.json; do
  [ -f "$icd" ] && export VK_DRIVER_FILES="$icd" VK_ICD_FILENAMES="$icd"
done
# gui_case NAME WHAT ARGS...: sdgen-gui in scripted mode under Xvfb (screenshot NAME-screenshot.png, output in
# NAME-stdout.txt / NAME-stderr.txt); fails naming WHAT when it exits non-zero or draws no image. Sets `rect`
# (the image's rectangle) and `preview` (the live preview's, empty when it showed none).
gui_case() {
  name=$1 what=$2
  shift 2
  rm -f "$out/$name-screenshot.png"
  xvfb-run -a -s "-screen 0 1280x800x24" "$gui" --window-size 1280x800 --auto-generate \
    --screenshot "$out/$name-screenshot.png" --exit-after --timeout 240 "$@" \
    >"$out/$name-stdout.txt" 2>"$out/$name-stderr.txt"
  code=$?
  cat "$out/$name-stdout.txt"
  cat "$out/$name-stderr.txt" >&2
  if [ $code -ne 0 ]; then
    echo "FAILED: sdgen-gui ($what) exited with code $code"
    exit 1
  fi
  rect=$(sed -n 's/^sdgen-gui: image-rect //p' "$out/$name-stdout.txt")
  preview=$(sed -n 's/^sdgen-gui: preview-rect //p' "$out/$name-stdout.txt")
  if [ -z "$rect" ]; then
    echo "FAILED: sdgen-gui ($what) did not report where it drew the image"
    exit 1
  fi
}

prompt="a large yellow square in the center on a blue background"
gui_case main "text to image" --prompt "$prompt" --seed 7 --steps 4 --preview-screenshot 2:"$out/preview.png" \
  --save-image "$out/result.png"
if ! "$cli" -p "$prompt" -s 7 --steps 4 -o "$out/cli.png"; then
  echo "FAILED: sdgen (the command line) could not make the reference image"
  exit 1
fi
if [ -z "$preview" ]; then
  echo "FAILED: sdgen-gui did not show a live preview"
  exit 1
fi
# shellcheck disable=SC2086 # the rectangles are four numbers
"$check" --preview "$out/preview.png" $preview || exit 1
# shellcheck disable=SC2086
"$check" "$out/main-screenshot.png" "$out/result.png" $rect "$out/cli.png" "$prompt" "Steps: 4," "Seed: 7," "Model: sdgen-tiny" || exit 1

# Image to image: the first result as the init image (docs/img2img.md); the same run on the command line must
# give the same PNG.
rm -f "$out/i2i-result.png" "$out/i2i-cli.png"
prompt2="a small red circle on a green background"
gui_case i2i "image to image" --prompt "$prompt2" --seed 8 --steps 4 --init-img "$out/result.png" --strength 0.6 \
  --save-image "$out/i2i-result.png"
if ! "$cli" -p "$prompt2" -s 8 --steps 4 -i "$out/result.png" --strength 0.6 -o "$out/i2i-cli.png"; then
  echo "FAILED: sdgen (the command line) could not make the image-to-image reference"
  exit 1
fi
# shellcheck disable=SC2086
"$check" "$out/i2i-screenshot.png" "$out/i2i-result.png" $rect "$out/i2i-cli.png" "$prompt2" "Seed: 8," \
  "Denoising strength: 0.6," "Model: sdgen-tiny"

# LoRA (docs/lora.md): the form's LoRA list and folder, as --lora and --lora-dir set them, with a prompt tag; the
# same run on the command line must give the same PNG, and the LoRAs must change the image.
rm -f "$out/lora-result.png" "$out/lora-cli.png" "$out/lora-none.png"
mkdir -p "$out/loras" "$out/loras-zero"
if ! python3 - "$out/loras" "$out/loras-zero" <<'PY'
import json, struct, sys
def write(path, key, rows, cols, rank, seed, zero=False):
    down = [((i * 7 + seed) % 13 - 6) / 20 for i in range(rank * cols)]
    up = [0.0 if zero else ((i * 5 + seed) % 11 - 5) / 20 for i in range(rows * rank)]
    n, m = len(down) * 4, len(up) * 4
    data = struct.pack("<%df" % len(down), *down) + struct.pack("<%df" % len(up), *up) + struct.pack("<f", rank)
    header = {key + ".lora_down.weight": {"dtype": "F32", "shape": [rank, cols], "data_offsets": [0, n]},
              key + ".lora_up.weight": {"dtype": "F32", "shape": [rows, rank], "data_offsets": [n, n + m]},
              key + ".alpha": {"dtype": "F32", "shape": [], "data_offsets": [n + m, n + m + 4]}}
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + data)
write(sys.argv[1] + "/flag.safetensors", "lora_unet_mid_block_attentions_0_transformer_blocks_0_attn1_to_q", 128, 128, 2, 1)
write(sys.argv[1] + "/tagged.safetensors", "lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn1_to_q", 64, 64, 2, 2)
# the same tag without effect (up = 0), for a reference whose parameters text is the same but has no LoRA in it
write(sys.argv[2] + "/tagged.safetensors", "lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn1_to_q", 64, 64, 2, 2, True)
PY
then
  echo "FAILED: could not write the test LoRAs (python3)"
  exit 1
fi
prompt3="a large yellow square in the center on a blue background <lora:tagged:1.5>"
gui_case lora LoRA --prompt "$prompt3" --seed 9 --steps 4 --lora "$out/loras/flag.safetensors:2" \
  --lora-dir "$out/loras" --save-image "$out/lora-result.png"
if ! "$cli" -p "$prompt3" -s 9 --steps 4 --lora "$out/loras/flag.safetensors:2" --lora-dir "$out/loras" \
    -o "$out/lora-cli.png" || ! "$cli" -p "$prompt3" -s 9 --steps 4 --lora "$out/loras/flag.safetensors:0" \
    --lora-dir "$out/loras-zero" -o "$out/lora-none.png"; then
  echo "FAILED: sdgen (the command line) could not make the LoRA references"
  exit 1
fi
# shellcheck disable=SC2086
"$check" "$out/lora-screenshot.png" "$out/lora-result.png" $rect "$out/lora-cli.png" "$prompt3" "Seed: 9," || exit 1
# The reference without LoRA effect has the same parameters text: only different pixels can fail this check.
# shellcheck disable=SC2086
"$check" "$out/lora-screenshot.png" "$out/lora-result.png" $rect "$out/lora-none.png" >"$out/lora-none-check.txt" 2>&1
if ! grep -q "^ok: the GUI's parameters text equals the command line's" "$out/lora-none-check.txt" ||
   ! grep -q "^FAILED: the GUI's image has exactly the pixels of the command line's" "$out/lora-none-check.txt"; then
  cat "$out/lora-none-check.txt"
  echo "FAILED: the LoRAs did not change the GUI's image (or the no-LoRA reference is not comparable)"
  exit 1
fi

# TAESD (docs/taesd.md): with --taesd the live preview is TAESD's decode at the image's size, so it is drawn in
# the rectangle the final image takes; it must show something. tiny-sd1 with its scale-2 TAESD (tests/data).
data=$(cd "$(dirname "$0")/../data" && pwd)
rm -f "$out/taesd-preview.png"
gui_case taesd "TAESD preview" --prompt "a red circle" -m "$data/tiny-sd1" --taesd "$data/tiny-taesd-sd1" -W 32 -H 32 \
  --seed 3 --steps 4 --preview-screenshot 2:"$out/taesd-preview.png"
if [ -z "$preview" ]; then
  echo "FAILED: sdgen-gui did not show a TAESD live preview"
  exit 1
fi
# shellcheck disable=SC2086
"$check" --preview "$out/taesd-preview.png" $preview || exit 1
if [ "$(echo "$preview" | cut -d' ' -f3,4)" != "$(echo "$rect" | cut -d' ' -f3,4)" ]; then
  echo "FAILED: the TAESD preview ($preview) is not drawn at the image's size ($rect)"
  exit 1
fi
echo "ok: the TAESD preview is drawn at the image's size"

# SDXL (docs/sdxl.md): the tiny SDXL model of tests/data with the micro-conditioning flags (the negative half's
# too), which the form's "SDXL micro-conditioning" fields take; the same run on the command line must give the same PNG, and the
# parameters text must carry the sizes and crop.
rm -f "$out/sdxl-result.png" "$out/sdxl-cli.png"
prompt5="a blue square"
micro="--original-size 96,64 --crop 8,0 --target-size 64,64 --negative-original-size 48,48 --negative-crop 0,8"
micro="$micro --negative-target-size 64,64"
# shellcheck disable=SC2086 # $micro is six flags with their values
gui_case sdxl "SDXL micro-conditioning" --prompt "$prompt5" -m "$data/tiny-sdxl" -W 64 -H 64 --seed 9 --steps 2 \
  $micro --save-image "$out/sdxl-result.png"
# shellcheck disable=SC2086
if ! "$cli" -m "$data/tiny-sdxl" -p "$prompt5" -W 64 -H 64 -s 9 --steps 2 $micro -o "$out/sdxl-cli.png"; then
  echo "FAILED: sdgen (the command line) could not make the SDXL reference"
  exit 1
fi
# shellcheck disable=SC2086
"$check" "$out/sdxl-screenshot.png" "$out/sdxl-result.png" $rect "$out/sdxl-cli.png" "$prompt5" \
  "Original size: 96x64, Crop: 8x0, Target size: 64x64," "Seed: 9," \
  "Negative original size: 48x48, Negative crop: 0x8, Negative target size: 64x64" || exit 1
echo "ok: SDXL micro-conditioning from the form reaches the image and its parameters"

# The SDXL refiner (docs/sdxl.md "Refiner"): the form's "SDXL refiner" fields take --refiner and --refiner-start;
# the worker runs the base to the switch and the refiner after it, as the command line does (the same PNG), and the
# parameters text names the refiner and the switch.
rm -f "$out/refiner-result.png" "$out/refiner-cli.png"
gui_case refiner "SDXL refiner" --prompt "$prompt5" -m "$data/tiny-sdxl" --refiner "$data/tiny-sdxl-refiner" \
  --refiner-start 0.5 -W 64 -H 64 --seed 9 --steps 4 --save-image "$out/refiner-result.png"
if ! "$cli" -m "$data/tiny-sdxl" --refiner "$data/tiny-sdxl-refiner" --refiner-start 0.5 -p "$prompt5" -W 64 -H 64 \
  -s 9 --steps 4 -o "$out/refiner-cli.png"; then
  echo "FAILED: sdgen (the command line) could not make the refiner reference"
  exit 1
fi
# shellcheck disable=SC2086
"$check" "$out/refiner-screenshot.png" "$out/refiner-result.png" $rect "$out/refiner-cli.png" "$prompt5" \
  "Refiner: tiny-sdxl-refiner, Refiner switch at: 0.5, Aesthetic score: 6, Negative aesthetic score: 2.5" || exit 1
echo "ok: the SDXL refiner from the form reaches the image and its parameters"

# The refiner's own LoRAs (the refiner section's "Refiner LoRAs", --refiner-lora): the worker merges them into the
# cached refiner as the command line's --refiner-lora does (the same PNG), and the image differs from the one
# without them.
rm -f "$out/refiner-lora-result.png" "$out/refiner-lora-cli.png"
rlora="$data/tiny-sdxl-refiner-lora.safetensors:0.8"
gui_case refiner-lora "SDXL refiner with a LoRA" --prompt "$prompt5" -m "$data/tiny-sdxl" --refiner "$data/tiny-sdxl-refiner" \
  --refiner-lora "$rlora" --refiner-start 0.5 -W 64 -H 64 --seed 9 --steps 4 --save-image "$out/refiner-lora-result.png"
if ! "$cli" -m "$data/tiny-sdxl" --refiner "$data/tiny-sdxl-refiner" --refiner-lora "$rlora" --refiner-start 0.5 \
  -p "$prompt5" -W 64 -H 64 -s 9 --steps 4 -o "$out/refiner-lora-cli.png"; then
  echo "FAILED: sdgen (the command line) could not make the refiner LoRA reference"
  exit 1
fi
if cmp -s "$out/refiner-lora-cli.png" "$out/refiner-cli.png"; then
  echo "FAILED: the refiner LoRA did not change the image"
  exit 1
fi
# shellcheck disable=SC2086
"$check" "$out/refiner-lora-screenshot.png" "$out/refiner-lora-result.png" $rect "$out/refiner-lora-cli.png" "$prompt5" \
  "Refiner: tiny-sdxl-refiner, Refiner switch at: 0.5" || exit 1
echo "ok: the refiner's LoRAs from the form reach the image as the command line's"

# The refiner after inpainting: the init image and mask (-i, --mask) with the refiner's fields; the worker's refiner
# keeps the mask, as the command line's does (the same PNG).
rm -f "$out/refiner-inpaint-result.png" "$out/refiner-inpaint-cli.png"
inpaint="-i $data/fixtures/i2i_init.png --mask $data/fixtures/i2i_mask.png --strength 1"
# shellcheck disable=SC2086 # $inpaint is three flags with their values
gui_case refiner-inpaint "SDXL refiner after inpainting" --prompt "$prompt5" -m "$data/tiny-sdxl" \
  --refiner "$data/tiny-sdxl-refiner" --refiner-start 0.5 $inpaint --seed 9 --steps 4 \
  --save-image "$out/refiner-inpaint-result.png"
# shellcheck disable=SC2086
if ! "$cli" -m "$data/tiny-sdxl" --refiner "$data/tiny-sdxl-refiner" --refiner-start 0.5 $inpaint -p "$prompt5" \
  -s 9 --steps 4 -o "$out/refiner-inpaint-cli.png"; then
  echo "FAILED: sdgen (the command line) could not make the inpainting refiner reference"
  exit 1
fi
# shellcheck disable=SC2086
"$check" "$out/refiner-inpaint-screenshot.png" "$out/refiner-inpaint-result.png" $rect "$out/refiner-inpaint-cli.png" \
  "$prompt5" "Denoising strength: 1, Refiner: tiny-sdxl-refiner, Refiner switch at: 0.5" || exit 1
echo "ok: the SDXL refiner after inpainting from the form gives the command line's image"
