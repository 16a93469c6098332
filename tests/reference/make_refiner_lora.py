#!/usr/bin/env python3
"""A small PEFT-layout LoRA for tests/data/tiny-sdxl-refiner (the end-to-end tests of sdgen --refiner-lora and of
sdgen-gui's refiner LoRAs, tests/app/CMakeLists.txt and tests/gui/run_gui_test.sh): rank 4 on four of the refiner
UNet's attention projections and two q_proj of its one text encoder (text_encoder_2), fp16, seeded. Its values
are no reference: the images it changes are compared with the command line's (GUI) or with the refiner without it
(CLI); the merge itself is checked against float64 by LoraSdxl.TheRefinerTakesItsOwnLoras.
  python3 tests/reference/make_refiner_lora.py tests/data/tiny-sdxl-refiner-lora.safetensors
"""
import sys

import numpy as np
from safetensors.numpy import save_file

MODULES = {
    "unet.down_blocks.1.attentions.0.transformer_blocks.0.attn1.to_q": (16, 16),
    "unet.down_blocks.1.attentions.0.transformer_blocks.0.attn2.to_q": (16, 16),
    "unet.down_blocks.1.attentions.0.transformer_blocks.1.attn1.to_q": (16, 16),
    "unet.down_blocks.1.attentions.0.transformer_blocks.1.attn2.to_q": (16, 16),
    "text_encoder_2.text_model.encoder.layers.0.self_attn.q_proj": (16, 16),
    "text_encoder_2.text_model.encoder.layers.1.self_attn.q_proj": (16, 16),
}


def main(path):
    rng = np.random.default_rng(19)
    tensors = {}
    for module, (out_features, in_features) in MODULES.items():
        tensors[module + ".lora_A.weight"] = rng.normal(0, 1.0, (4, in_features)).astype(np.float16)
        tensors[module + ".lora_B.weight"] = rng.normal(0, 1.0, (out_features, 4)).astype(np.float16)
    save_file(tensors, path)


if __name__ == "__main__":
    main(sys.argv[1])
