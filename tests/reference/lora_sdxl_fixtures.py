"""Section `lorasdxl` of make_fixtures.py (issue 22): LoRA files for tests/data/tiny-sdxl and the images diffusers
0.42.1 makes with them (StableDiffusionXLPipeline.load_lora_weights + fuse_lora, fp32 on the CPU; needs peft,
which scripts/device/make-fixtures.sh installs from .whl/ with accelerate and psutil).

LoRA files (random weights, seeded, rank 4, every value fp16-representable), in fixtures/:
  lora_sdxl_kohya.safetensors  kohya sd-scripts' SDXL layout: the UNet's modules under their LDM names
      (lora_unet_input_blocks_4_1_transformer_blocks_0_attn1_to_q, ...: sd-scripts trains SDXL on the LDM UNet;
      diffusers maps them with _maybe_map_sgm_blocks_to_diffusers), the first text encoder as lora_te1_, the
      second (OpenCLIP bigG's kind, HF names) as lora_te2_; .lora_down.weight, .lora_up.weight, .alpha = 2,
      stored F16: every transformer linear of the UNet (attention q/k/v/out, GEGLU ff.net.0.proj, ff.net.2,
      proj_in/proj_out) and every q/k/v/out_proj and mlp fc1/fc2 of both text encoders.
  lora_sdxl_peft.safetensors  diffusers/PEFT layout (unet.<module>.lora_A.weight / .lora_B.weight,
      text_encoder.<module>..., text_encoder_2.<module>..., no adapter metadata: alpha = rank), F32: the UNet's
      attention projections and both text encoders' attention projections.

Reference images (fixtures/lora_sdxl.safetensors, `RUN.image` [1,16,24,3] NHWC in [0,1]) with the prompt, negative
prompt, size and seed of the `sdxl` section's pipelines, 4 Euler steps at guidance 5, one fresh pipeline per run:
  kohya  kohya at 0.8     load_lora_weights(file, adapter_name="kohya"); fuse_lora(lora_scale=0.8)
  peft   peft at 1.0      load_lora_weights; fuse_lora(lora_scale=1.0)
  both   kohya at 0.6 and peft at -0.5: set_adapters([..], adapter_weights=[0.6, -0.5]), fuse_lora
  none   no LoRA (for a test that the LoRAs change the image)
After each fuse every targeted module is checked: fused W - W0 == scale * alpha / rank * up @ down, so a key that
diffusers did not map fails here, not in C++. fixtures/lora_sdxl.json lists the runs, files and targets.
"""
import torch

import ldm_names
import lora_fixtures
import sdxl_fixtures
from real_checkpoints import base_folder

SEED = 3300
STEPS = 4
GUIDANCE = 5.0
SCHEDULER = "euler"
COMPONENTS = ("unet", "text_encoder", "text_encoder_2")
FILES = {"kohya": "lora_sdxl_kohya.safetensors", "peft": "lora_sdxl_peft.safetensors"}
RUNS = [("kohya", [("kohya", 0.8)]), ("peft", [("peft", 1.0)]), ("both", [("kohya", 0.6), ("peft", -0.5)]),
        ("none", [])]
UNET_LINEARS = lora_fixtures.ATTN + ("ff.net.0.proj", "ff.net.2", "proj_in", "proj_out")


def unet_linears(name):
    return name.endswith(UNET_LINEARS) and ".attentions." in name


def unet_attention(name):
    return name.endswith(lora_fixtures.ATTN)


def make_file(kind, pipe, seed):
    """Returns (tensors to save, {'<component>.<module>': (down, up, alpha)})."""
    g = torch.Generator().manual_seed(seed)
    te = lora_fixtures.te_all if kind == "kohya" else lora_fixtures.te_attention
    parts = [("unet", pipe.unet, unet_linears if kind == "kohya" else unet_attention),
             ("text_encoder", pipe.text_encoder, te), ("text_encoder_2", pipe.text_encoder_2, te)]
    cfg = pipe.unet.config
    tensors, applied = {}, {}
    for component, model, keep in parts:
        for name, module in lora_fixtures.lora_modules(model, keep):
            down, up = lora_fixtures.down_up(module, g)
            if kind == "kohya":
                if component == "unet":
                    ldm = ldm_names.unet_name_to_ldm(name + ".weight", cfg.layers_per_block, cfg.up_block_types)
                    key = "lora_unet_" + ldm[:-len(".weight")].replace(".", "_")
                else:
                    prefix = "lora_te1_" if component == "text_encoder" else "lora_te2_"
                    key = prefix + ldm_names.clip_key(name).replace(".", "_")
                tensors[key + ".lora_down.weight"] = down.half()
                tensors[key + ".lora_up.weight"] = up.half()
                tensors[key + ".alpha"] = torch.tensor(lora_fixtures.KOHYA_ALPHA).half()
                alpha = lora_fixtures.KOHYA_ALPHA
            else:
                full = name if component == "unet" else ldm_names.clip_key(name)
                tensors[f"{component}.{full}.lora_A.weight"] = down
                tensors[f"{component}.{full}.lora_B.weight"] = up
                alpha = float(lora_fixtures.RANK)
            applied[f"{component}.{name}"] = (down, up, alpha)
    return tensors, applied


@torch.no_grad()
def make_lora_sdxl_fixtures(out, h):
    folder = base_folder(out, sdxl_fixtures.FOLDER)
    probe = sdxl_fixtures.load_pipeline(folder)
    files, targets = {}, {}
    for i, kind in enumerate(FILES):
        tensors, applied = make_file(kind, probe, SEED + i)
        lora_fixtures.write_lora(out / "fixtures" / FILES[kind], tensors, h)
        files[kind], targets[kind] = applied, sorted(applied)
    args = dict(prompt=sdxl_fixtures.PROMPT, negative_prompt=sdxl_fixtures.NEGATIVE, height=sdxl_fixtures.HEIGHT,
                width=sdxl_fixtures.WIDTH, num_inference_steps=STEPS, guidance_scale=GUIDANCE,
                seed=sdxl_fixtures.PIPELINE_SEED)
    t, runs = {}, []
    for run, loras in RUNS:
        pipe = sdxl_fixtures.load_pipeline(folder)
        pipe.scheduler = h.make_scheduler(SCHEDULER, dict(pipe.scheduler.config))
        before = lora_fixtures.weights_of(pipe, COMPONENTS)
        expected, names = {}, []
        for kind, scale in loras:
            pipe.load_lora_weights(str(out / "fixtures" / FILES[kind]), adapter_name=kind)
            names.append(kind)
            for key, (down, up, alpha) in files[kind].items():
                expected.setdefault(key, []).append((down, up, alpha, scale))
        if len(loras) == 1:
            pipe.fuse_lora(components=list(COMPONENTS), lora_scale=loras[0][1], adapter_names=names)
        elif loras:
            pipe.set_adapters(names, adapter_weights=[s for _, s in loras])
            pipe.fuse_lora(components=list(COMPONENTS), lora_scale=1.0, adapter_names=names)
        worst = lora_fixtures.check_fused(pipe, before, expected, f"sdxl {run}", COMPONENTS)
        result = pipe(args["prompt"], negative_prompt=args["negative_prompt"], height=args["height"],
                      width=args["width"], num_inference_steps=STEPS, guidance_scale=GUIDANCE,
                      generator=torch.Generator("cpu").manual_seed(args["seed"]), output_type="np")
        t[f"{run}.image"] = torch.from_numpy(result.images.copy())
        runs.append({"id": run, "loras": [{"file": FILES[k], "scale": s} for k, s in loras],
                     "max_fused_weight_error": worst, "tensors": {"image": f"{run}.image"}})
        h.log(f"lora sdxl {run}: {loras}, fused weights within {worst:.2e}, "
              f"image mean {float(t[f'{run}.image'].mean()):.4f}")
    for run in ("kohya", "peft", "both"):
        d = float((t[f"{run}.image"] - t["none.image"]).abs().mean())
        h.log(f"lora sdxl {run}: mean |image - no LoRA| = {d:.4f}")
        if d < 2.0 / 255:
            raise AssertionError(f"lora sdxl {run}: the LoRA barely changes the image ({d}); the test would be weak")
    h.write_tensors(out / "fixtures" / "lora_sdxl.safetensors", t)
    h.write_json(out / "fixtures" / "lora_sdxl.json", {
        "model": f"tests/data/{sdxl_fixtures.FOLDER}",
        "pipeline": ("diffusers StableDiffusionXLPipeline, fp32, CPU, add_watermarker False; load_lora_weights + "
                     "fuse_lora (peft backend)"),
        "args": args, "scheduler": SCHEDULER, "rank": lora_fixtures.RANK, "kohya_alpha": lora_fixtures.KOHYA_ALPHA,
        "files": FILES, "targets": targets, "runs": runs,
        "layouts": {"RUN.image": "[1,16,24,3] NHWC float in [0,1] (output_type 'np')"},
        "versions": dict(h.versions(), peft=__import__("peft").__version__), "tensor_shapes": h.tensor_index(t)})
