"""Section `lora` of make_fixtures.py (`--only lora`, issue 21): LoRA files for tests/data/tiny-sd1 and the images
diffusers 0.42.1 makes with them (StableDiffusionPipeline.load_lora_weights + fuse_lora, fp32 on the CPU; needs
peft, which scripts/device/make-fixtures.sh installs from .whl/ with accelerate and psutil).

LoRA files (random weights, seeded, rank 4, every value fp16-representable), in fixtures/:
  lora_sd1_kohya_locon.safetensors  kohya/webui layout (lora_unet_*, lora_te_*; .lora_down.weight,
      .lora_up.weight, .alpha = 2 for every module, stored F16 as kohya does): every Linear and Conv2d of the UNet
      except the time embedding MLP (attention q/k/v/out, GEGLU ff.net.0.proj, ff.net.2, the 1x1 proj_in/proj_out,
      conv_shortcut, time_emb_proj, and "LoCon" on the 3x3 convs: resnet conv1/conv2, down/upsamplers, conv_in,
      conv_out: down [r, Cin, 3, 3], up [Cout, r, 1, 1]) and every q/k/v/out_proj and mlp fc1/fc2 of the text encoder.
  lora_sd1_kohya_plain.safetensors  kohya layout without any .alpha (alpha = rank, scale 1): the UNet's attention
      projections only (to_q, to_k, to_v, to_out.0), F16.
  lora_sd1_peft.safetensors  diffusers/PEFT layout (unet.<module>.lora_A.weight / .lora_B.weight,
      text_encoder.<module>.lora_A.weight / .lora_B.weight, no adapter metadata: alpha = rank), F32: the UNet's
      attention and feed-forward linears and the text encoder's q/k/v/out_proj.

Reference images (fixtures/lora_sd1.safetensors, `RUN.image` [1,16,16,3] NHWC in [0,1]) at the settings of the
`pipelines` section (prompt, negative prompt, 4 steps, guidance 7.5, 16x16, seed 1234), Euler, one fresh pipeline
per run:
  kohya  kohya_locon at 0.8    load_lora_weights(file, adapter_name="kohya"); fuse_lora(lora_scale=0.8)
  peft   peft at 1.0           load_lora_weights; fuse_lora(lora_scale=1.0)
  plain  kohya_plain at 1.0    load_lora_weights; fuse_lora(lora_scale=1.0)
  both   kohya_locon at 0.6 and peft at -0.5: both loaded, set_adapters([..], adapter_weights=[0.6, -0.5]),
         fuse_lora(adapter_names=[..])
  none   no LoRA (the same settings, for a test that the LoRAs change the image)
After each fuse the script checks every targeted module: fused W - W0 == scale * alpha / rank * up @ down (LoCon:
the 3x3 down kernels contracted over the rank), so a key that diffusers did not map fails here, not in C++.
fixtures/lora_sd1.json lists the runs, the files, the modules each file targets and the versions.
"""
import torch
from torch import nn

import ldm_names
import tiny_models
from real_checkpoints import base_folder

RANK = 4
KOHYA_ALPHA = 2.0
SEED = 2100
SCHEDULER = "euler"
FILES = {"kohya_locon": "lora_sd1_kohya_locon.safetensors", "kohya_plain": "lora_sd1_kohya_plain.safetensors",
         "peft": "lora_sd1_peft.safetensors"}
RUNS = [("kohya", [("kohya_locon", 0.8)]), ("peft", [("peft", 1.0)]), ("plain", [("kohya_plain", 1.0)]),
        ("both", [("kohya_locon", 0.6), ("peft", -0.5)]), ("none", [])]
ATTN = ("attn1.to_q", "attn1.to_k", "attn1.to_v", "attn1.to_out.0", "attn2.to_q", "attn2.to_k", "attn2.to_v",
        "attn2.to_out.0")
TE_ATTN = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.out_proj")
TE_MLP = ("mlp.fc1", "mlp.fc2")


def lora_modules(model, keep):
    """[(name, module)] of the model's nn.Linear / nn.Conv2d whose name passes keep(name), sorted."""
    return sorted((n, m) for n, m in model.named_modules() if isinstance(m, (nn.Linear, nn.Conv2d)) and keep(n))


def unet_all(name):
    return not name.startswith("time_embedding.")


def unet_attention(name):
    return name.endswith(ATTN)


def unet_linears(name):
    return name.endswith(ATTN + ("ff.net.0.proj", "ff.net.2"))


def te_all(name):
    return name.endswith(TE_ATTN + TE_MLP)


def te_attention(name):
    return name.endswith(TE_ATTN)


def down_up(module, g):
    """Random (down, up) for one module, fp16-representable: down [r, Cin(, kh, kw)], up [Cout, r(, 1, 1)].
    up @ down has about half the base weight's magnitude (base std 1/sqrt(fan_in))."""
    w = module.weight
    fan_in = w[0].numel()
    down_shape = (RANK,) + tuple(w.shape[1:])
    up_shape = (w.shape[0], RANK) + ((1, 1) if w.dim() == 4 else ())
    down = tiny_models.random_fp16_tensor(down_shape, 1.0 / fan_in ** 0.5, g).float()
    up = tiny_models.random_fp16_tensor(up_shape, 0.5 / RANK ** 0.5, g).float()
    return down, up


def delta_of(down, up):
    """up @ down as the weight's shape (for a conv: the rank contracted, kernel taps kept)."""
    if down.dim() == 2:
        return up @ down
    return torch.einsum("or,rikl->oikl", up.flatten(1), down)


def make_file(kind, pipe, seed):
    """Returns (tensors to save, dtype, {module key 'unet.X' / 'text_encoder.X': (down, up, alpha)})."""
    g = torch.Generator().manual_seed(seed)
    if kind == "kohya_locon":
        parts = [("unet", pipe.unet, unet_all), ("text_encoder", pipe.text_encoder, te_all)]
    elif kind == "kohya_plain":
        parts = [("unet", pipe.unet, unet_attention)]
    else:
        parts = [("unet", pipe.unet, unet_linears), ("text_encoder", pipe.text_encoder, te_attention)]
    tensors, applied = {}, {}
    for component, model, keep in parts:
        for name, module in lora_modules(model, keep):
            down, up = down_up(module, g)
            full = ldm_names.clip_key(name) if component == "text_encoder" else name
            if kind.startswith("kohya"):
                prefix = "lora_unet_" if component == "unet" else "lora_te_"
                key = prefix + full.replace(".", "_")
                tensors[key + ".lora_down.weight"] = down.half()
                tensors[key + ".lora_up.weight"] = up.half()
                alpha = float(RANK)
                if kind == "kohya_locon":
                    tensors[key + ".alpha"] = torch.tensor(KOHYA_ALPHA).half()
                    alpha = KOHYA_ALPHA
            else:
                tensors[f"{component}.{full}.lora_A.weight"] = down
                tensors[f"{component}.{full}.lora_B.weight"] = up
                alpha = float(RANK)
            applied[f"{component}.{name}"] = (down, up, alpha)
    return tensors, applied


def write_lora(path, tensors, h):
    from safetensors.torch import save_file
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in tensors.items()}, str(path), metadata={"format": "pt"})
    size = path.stat().st_size
    h.log(f"wrote {path} ({len(tensors)} tensors, {size} bytes)")
    if size > 1 << 20:
        raise RuntimeError(f"{path} is {size} bytes, over the 1 MiB budget")


def weights_of(pipe, components=("unet", "text_encoder")):
    """{'<component>.X': weight} of every Linear/Conv2d, cloned (names without PEFT's base_layer)."""
    out = {}
    for component in components:
        for name, p in getattr(pipe, component).named_parameters():
            if name.endswith(".weight") and "lora_" not in name:
                out[f"{component}.{name[:-len('.weight')].replace('.base_layer', '')}"] = p.detach().clone()
    return out


def check_fused(pipe, before, expected, run, components=("unet", "text_encoder")):
    """Every module: fused - before == sum of scale * alpha / rank * delta over the LoRAs that target it; every
    other weight unchanged."""
    after = weights_of(pipe, components)
    worst = 0.0
    for key, w0 in before.items():
        want = w0.clone()
        for down, up, alpha, scale in expected.get(key, []):
            want = want + scale * alpha / RANK * delta_of(down, up)
        err = float((after[key] - want).abs().max())
        tol = 1e-5 * (1 + float(want.abs().max()))
        if err > tol:
            raise AssertionError(f"lora {run}: {key} differs from W + scale*alpha/rank*up@down by {err}")
        worst = max(worst, err)
    missing = set(expected) - set(before)
    if missing:
        raise AssertionError(f"lora {run}: modules not in the model: {sorted(missing)[:5]}")
    return worst


@torch.no_grad()
def make_lora_fixtures(out, h):
    spec = tiny_models.TINY["sd1"]
    folder = base_folder(out, spec["folder"])
    a = h.PIPELINE_ARGS
    probe = h.load_pipeline(folder)
    files, targets = {}, {}
    for i, kind in enumerate(FILES):
        tensors, applied = make_file(kind, probe, SEED + i)
        write_lora(out / "fixtures" / FILES[kind], tensors, h)
        files[kind] = applied
        targets[kind] = sorted(applied)
    t, runs = {}, []
    for run, loras in RUNS:
        pipe = h.load_pipeline(folder)
        pipe.scheduler = h.make_scheduler(SCHEDULER, dict(pipe.scheduler.config))
        before = weights_of(pipe)
        expected = {}
        names = []
        for kind, scale in loras:
            pipe.load_lora_weights(str(out / "fixtures" / FILES[kind]), adapter_name=kind)
            names.append(kind)
            for key, (down, up, alpha) in files[kind].items():
                expected.setdefault(key, []).append((down, up, alpha, scale))
        if len(loras) == 1:
            pipe.fuse_lora(components=["unet", "text_encoder"], lora_scale=loras[0][1], adapter_names=names)
        elif loras:
            pipe.set_adapters(names, adapter_weights=[s for _, s in loras])
            pipe.fuse_lora(components=["unet", "text_encoder"], lora_scale=1.0, adapter_names=names)
        worst = check_fused(pipe, before, expected, run)
        result = pipe(a["prompt"], negative_prompt=a["negative_prompt"], num_inference_steps=a["num_inference_steps"],
                      guidance_scale=a["guidance_scale"], height=a["height"], width=a["width"],
                      generator=torch.Generator("cpu").manual_seed(a["seed"]), output_type="np")
        image = torch.from_numpy(result.images.copy())
        t[f"{run}.image"] = image
        runs.append({"id": run, "loras": [{"file": FILES[k], "scale": s} for k, s in loras],
                     "max_fused_weight_error": worst, "tensors": {"image": f"{run}.image"}})
        h.log(f"lora {run}: {loras}, fused weights within {worst:.2e}, image mean {float(image.mean()):.4f}")
    for run in ("kohya", "peft", "plain", "both"):
        d = float((t[f"{run}.image"] - t["none.image"]).abs().mean())
        h.log(f"lora {run}: mean |image - no LoRA| = {d:.4f}")
        if d < 2.0 / 255:
            raise AssertionError(f"lora {run}: the LoRA barely changes the image ({d}); the test would be weak")
    h.write_tensors(out / "fixtures" / "lora_sd1.safetensors", t)
    h.write_json(out / "fixtures" / "lora_sd1.json", {
        "model": f"tests/data/{spec['folder']}",
        "pipeline": ("diffusers StableDiffusionPipeline, fp32, CPU, safety_checker None; load_lora_weights + "
                     "fuse_lora (peft backend)"),
        "args": a, "scheduler": SCHEDULER, "rank": RANK, "kohya_alpha": KOHYA_ALPHA,
        "files": FILES, "targets": targets, "runs": runs,
        "layouts": {"RUN.image": "[1,16,16,3] NHWC float in [0,1] (output_type 'np')"},
        "versions": dict(h.versions(), peft=__import__("peft").__version__), "tensor_shapes": h.tensor_index(t)})
