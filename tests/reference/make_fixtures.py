#!/usr/bin/env python3
"""Writes the reference fixtures of tests/data/ with diffusers and transformers (torch on the CPU, fp32/fp64).

  python3 tests/reference/make_fixtures.py --out DIR [--only SECTION,...]   (SECTIONS below; default: all)

DIR receives tiny-sd1/, tiny-sd2/ (diffusers folders), tiny-sd1-ldm.safetensors, tiny-sd2-ldm.safetensors and
fixtures/*.{json,safetensors} (realsched and tf5text: real_checkpoints.py, which also writes tiny-clip-tf5/;
prompts: prompt_weighting.py, webui-syntax prompt conditioning; img2img and inpaint: image_to_image.py, which also
writes tiny-sd1-inpaint/ and tiny-sd1-inpaint-unet-ldm.safetensors; samplers and samplerpipes:
sampler_fixtures.py, the samplers of issue 21; lora: lora_fixtures.py, LoRA files and the images of diffusers'
load_lora_weights + fuse_lora, needs peft; vaetiling: vae_tiling_fixtures.py, diffusers' tiled VAE decode and
encode; taesd: taesd_fixtures.py, random-weight AutoencoderTiny models (tiny-taesd*/), their outputs and tiny-sd1
pipelines decoding and encoding with one; sdxl: sdxl_fixtures.py, tiny-sdxl/ and SDXL / SDXL-Turbo / SD-Turbo
references; sdxlrefiner: sdxl_refiner_fixtures.py, tiny-sdxl-refiner/ and the refiner's img2img and base + refiner
ensemble references; lorasdxl: lora_sdxl_fixtures.py, SDXL LoRA files (kohya, PEFT) and diffusers' images with
them, needs peft; sdxlrefinerinpaint: sdxl_refiner_inpaint_fixtures.py, the refiner after inpainting;
sdxlinpaint9: sdxl_inpaint9_fixtures.py, tiny-sdxl-inpaint/, a 9-channel SDXL UNet, and its references;
sdxlrefinersde: sdxl_refiner_sde_fixtures.py, the ensemble with DPM++ SDE and DPM++ 2S a);
docs/reference-fixtures.md says what each holds. It is run on the device machine
by scripts/device/make-fixtures.sh (this machine has no torch). 'components' and 'pipelines' read the model
folders that 'models' wrote into DIR; every section logs its progress, a failing section does not stop the
rest, and the exit status is non-zero if any failed. The output is deterministic (same torch/diffusers).
"""
import argparse
import copy
import json
import math
import pathlib
import sys
import time
import traceback

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import torch  # noqa: E402

torch.set_num_threads(16)

import ldm_names  # noqa: E402
import tiny_models  # noqa: E402

T0 = time.time()
SECTIONS = ["rng", "schedulers", "models", "components", "pipelines", "realsched", "tf5text", "prompts", "img2img",
            "inpaint", "samplers", "samplerpipes", "lora", "vaetiling", "taesd", "sdxl", "sdxlimg2img",
            "sdxlnegmicro", "sdxlrefiner", "lorasdxl", "sdxlrefinerinpaint",
            "sdxlinpaint9", "sdxlrefinersde"]


def log(msg):
    print(f"[{time.time() - T0:7.1f}s] {msg}", flush=True)


def jsonable(v):
    if isinstance(v, dict):
        # diffusers builds _use_default_values from a set: sorted, so that regenerated files do not differ
        return {str(k): sorted(jsonable(x)) if k == "_use_default_values" else jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, torch.Tensor) or (hasattr(v, "tolist") and hasattr(v, "dtype")):  # tensors, numpy values
        return jsonable(v.tolist())
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)


def write_json(path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(jsonable(obj), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    log(f"wrote {path} ({path.stat().st_size} bytes)")


def write_tensors(path, tensors, limit=2 << 20):
    """fp32 (floats) / int64 (ids) safetensors; names sorted by the library."""
    from safetensors.torch import save_file
    out = {}
    for k, t in tensors.items():
        t = torch.as_tensor(t).detach().cpu()
        out[k] = t.to(torch.float32).contiguous() if t.is_floating_point() else t.to(torch.int64).contiguous()
    path.parent.mkdir(parents=True, exist_ok=True)
    # one metadata entry: safetensors writes a map's entries in no fixed order
    save_file(out, str(path), metadata={"format": "pt"})
    size = path.stat().st_size
    log(f"wrote {path} ({len(out)} tensors, {size} bytes)")
    if size > limit:
        raise RuntimeError(f"{path} is {size} bytes, over the {limit} byte budget")


def tensor_index(tensors):
    return {k: list(torch.as_tensor(v).shape) for k, v in sorted(tensors.items())}


def versions():
    import diffusers
    import safetensors
    import transformers
    return {"torch": torch.__version__, "diffusers": diffusers.__version__,
            "transformers": transformers.__version__, "safetensors": safetensors.__version__,
            "python": sys.version.split()[0]}


# ---------------------------------------------------------------------------------------------------------------
# 1. torch's CPU generator


def make_rng(out):
    t = {}
    entries = {}
    shapes = {"n4": (4,), "n15": (15,), "n16": (16,), "n100": (100,), "latent": (1, 4, 8, 8)}
    for seed in (0, 42, 123456789):
        for name, shape in shapes.items():
            g = torch.Generator().manual_seed(seed)
            key = f"randn.seed{seed}.{name}"
            t[key] = torch.randn(shape, generator=g)
            entries[key] = {"seed": seed, "shape": list(shape), "draw": "first draw of a freshly seeded generator"}
    g = torch.Generator().manual_seed(7)
    for key, shape in (("seq7.a", (2, 4, 8, 8)), ("seq7.b", (1, 4, 8, 8)), ("seq7.c", (5,))):
        t[key] = torch.randn(shape, generator=g)
        entries[key] = {"seed": 7, "shape": list(shape), "draw": "sequential draws a, b, c from one generator"}
    write_tensors(out / "fixtures" / "rng.safetensors", t)
    write_json(out / "fixtures" / "rng.json", {
        "about": "torch.randn(shape, generator=torch.Generator().manual_seed(seed)), float32, CPU",
        "versions": versions(), "tensors": entries})


# ---------------------------------------------------------------------------------------------------------------
# 2. schedulers with a fake model

SCHEDULERS = {
    "ddim": ("DDIMScheduler", {}),
    "euler": ("EulerDiscreteScheduler", {}),
    "euler_karras": ("EulerDiscreteScheduler", {"use_karras_sigmas": True}),
    "euler_a": ("EulerAncestralDiscreteScheduler", {}),
    "dpmpp_2m": ("DPMSolverMultistepScheduler", {"algorithm_type": "dpmsolver++", "solver_order": 2}),
    "dpmpp_2m_karras": ("DPMSolverMultistepScheduler",
                        {"algorithm_type": "dpmsolver++", "solver_order": 2, "use_karras_sigmas": True}),
}
MODES = {
    "eps_leading": {"prediction_type": "epsilon", "timestep_spacing": "leading"},
    "v_trailing": {"prediction_type": "v_prediction", "timestep_spacing": "trailing"},
}
PIPELINE_SCHEDULERS = ["ddim", "euler", "euler_a", "dpmpp_2m", "dpmpp_2m_karras"]


def make_scheduler(name, base_config):
    import diffusers
    cls_name, overrides = SCHEDULERS[name]
    return getattr(diffusers, cls_name).from_config(dict(base_config), **overrides)


def sigmas_of(sched):
    s = getattr(sched, "sigmas", None)
    return s.detach().clone().float() if isinstance(s, torch.Tensor) else None


def make_schedulers(out):
    tensors, runs = {}, []
    for name in SCHEDULERS:
        for mode, mode_cfg in MODES.items():
            for steps in (4, 10):
                rid = f"{name}.{mode}.s{steps}"
                base = dict(tiny_models.SCHEDULER_SD15, **mode_cfg)
                sched = make_scheduler(name, base)
                sched.set_timesteps(steps)
                timesteps = sched.timesteps.detach().clone()
                sigmas = sigmas_of(sched)
                init_sigma = float(sched.init_noise_sigma)
                g = torch.Generator().manual_seed(11)
                x = torch.randn((1, 4, 4, 4), generator=g) * sched.init_noise_sigma
                x_init = x.clone()
                model_in, x_steps, outs = [], [], []
                for t in timesteps:
                    xin = sched.scale_model_input(x, t)
                    model_out = 0.3 * xin + 0.05 * math.cos(float(t) / 100.0)
                    x = sched.step(model_out, t, x, generator=g).prev_sample
                    model_in.append(xin.clone())
                    outs.append(model_out.clone())
                    x_steps.append(x.clone())
                names = {"timesteps": f"{rid}.timesteps", "x_init": f"{rid}.x_init",
                         "model_in": f"{rid}.model_in", "model_out": f"{rid}.model_out",
                         "x_steps": f"{rid}.x_steps", "x_final": f"{rid}.x_final"}
                tensors[names["timesteps"]] = timesteps.double()
                tensors[names["x_init"]] = x_init
                tensors[names["model_in"]] = torch.stack(model_in)
                tensors[names["model_out"]] = torch.stack(outs)
                tensors[names["x_steps"]] = torch.stack(x_steps)
                tensors[names["x_final"]] = x
                if sigmas is not None:
                    names["sigmas"] = f"{rid}.sigmas"
                    tensors[names["sigmas"]] = sigmas
                runs.append({
                    "id": rid, "scheduler": name, "class": type(sched).__name__, "mode": mode, "steps": steps,
                    "overrides": dict(SCHEDULERS[name][1], **mode_cfg),
                    "config": dict(sched.config), "init_noise_sigma": init_sigma,
                    "timesteps": [float(v) for v in timesteps.tolist()],
                    "timesteps_dtype": str(timesteps.dtype).replace("torch.", ""),
                    "sigmas": None if sigmas is None else [float(v) for v in sigmas.tolist()],
                    "tensors": names,
                })
                log(f"scheduler {rid}: timesteps {[round(float(v), 3) for v in timesteps.tolist()]}, "
                    f"|x_final| max {float(x.abs().max()):.4f}")
    write_tensors(out / "fixtures" / "schedulers.safetensors", tensors)
    write_json(out / "fixtures" / "schedulers.json", {
        "about": "diffusers schedulers driven by a fake model; see docs/reference-fixtures.md",
        "loop": ("g = torch.Generator().manual_seed(11); x = torch.randn([1,4,4,4], generator=g) * "
                 "init_noise_sigma; for t in timesteps: xin = scale_model_input(x, t); "
                 "out = 0.3*xin + 0.05*cos(float(t)/100); x = step(out, t, x, generator=g).prev_sample"),
        "layouts": {"timesteps": "[steps] (stored as float32; exact values in 'timesteps')",
                    "sigmas": "[steps+1]", "x_init": "[1,4,4,4] (already times init_noise_sigma)",
                    "model_in": "[steps,1,4,4,4] scale_model_input(x, t) of each step",
                    "model_out": "[steps,1,4,4,4]", "x_steps": "[steps,1,4,4,4] x after each step",
                    "x_final": "[1,4,4,4]"},
        "versions": versions(), "runs": runs, "tensor_shapes": tensor_index(tensors)})


# ---------------------------------------------------------------------------------------------------------------
# 3. the tiny models: diffusers folders, LDM single files


def load_safetensors(path):
    from safetensors.torch import load_file
    return load_file(str(path))


def fix_text_encoder_names(folder):
    """Published diffusers folders name the text encoder's weights 'text_model.*'; transformers 5 saves a CLIPTextModel
    made from scratch without that level (its in-memory names). Rename to the published names (the tf5text section
    of real_checkpoints.py keeps transformers 5's names for the test of that layout)."""
    from safetensors import safe_open
    from safetensors.torch import save_file
    path = folder / "text_encoder" / "model.safetensors"
    with safe_open(str(path), framework="pt") as f:
        meta = f.metadata() or {}
        keys = list(f.keys())
    if all(k.startswith("text_model.") for k in keys):
        return
    log(f"WARNING: {path} has names without 'text_model.' (e.g. {keys[0]}); renaming")
    sd = load_safetensors(path)
    save_file({ldm_names.clip_key(k): v for k, v in sd.items()}, str(path), metadata=meta)


def fix_tokenizer_folder(folder, key):
    tok_dir = folder / "tokenizer"
    if key == "sd1":  # the SD 1.5 layout: vocab.json + merges.txt
        for f in ("vocab.json", "merges.txt"):
            (tok_dir / f).write_bytes((tiny_models.CLIP_VOCAB_DIR / f).read_bytes())
        (tok_dir / "tokenizer.json").unlink(missing_ok=True)
    else:  # the fast-tokenizer layout: tokenizer.json only
        if not (tok_dir / "tokenizer.json").exists():
            raise FileNotFoundError(f"{tok_dir} has no tokenizer.json")
        for f in ("vocab.json", "merges.txt"):
            (tok_dir / f).unlink(missing_ok=True)
    log(f"{tok_dir}: {sorted(p.name for p in tok_dir.iterdir())}")


def build_pipeline(key):
    from diffusers import StableDiffusionPipeline
    spec = tiny_models.TINY[key]
    c = tiny_models.build_components(spec)
    pipe = StableDiffusionPipeline(vae=c["vae"], text_encoder=c["text_encoder"], tokenizer=c["tokenizer"],
                                   unet=c["unet"], scheduler=c["scheduler"], safety_checker=None,
                                   feature_extractor=None, requires_safety_checker=False)
    pipe.set_progress_bar_config(disable=True)
    return pipe


def load_pipeline(folder):
    from diffusers import StableDiffusionPipeline
    pipe = StableDiffusionPipeline.from_pretrained(str(folder), torch_dtype=torch.float32, safety_checker=None,
                                                   requires_safety_checker=False, local_files_only=True)
    pipe.set_progress_bar_config(disable=True)
    return pipe


def assert_same_weights(a, b, what):
    sa = {ldm_names.clip_key(k) if what == "text_encoder" else k: v for k, v in a.state_dict().items()}
    sb = {ldm_names.clip_key(k) if what == "text_encoder" else k: v for k, v in b.state_dict().items()}
    sa = {k: v for k, v in sa.items() if not k.endswith("position_ids")}
    sb = {k: v for k, v in sb.items() if not k.endswith("position_ids")}
    if set(sa) != set(sb):
        raise AssertionError(f"{what}: reloaded names differ: {sorted(set(sa) ^ set(sb))[:8]}")
    bad = [k for k in sa if sa[k].dtype != sb[k].dtype or not torch.equal(sa[k], sb[k])]
    if bad:
        raise AssertionError(f"{what}: {len(bad)} reloaded tensors differ, e.g. {bad[:5]}")


def write_ldm(key, folder, ldm_path):
    spec = tiny_models.TINY[key]
    return write_ldm_from_folder(folder, ldm_path, spec["text_kind"], spec["seed"] + 9, key)


def write_ldm_from_folder(folder, ldm_path, text_kind, extra_seed, key):
    """Writes the LDM single file from the saved diffusers folder (fp16) and checks it both ways.
    text_kind: "clip" (SD 1.x) or "openclip" (SD 2.x, which gets one more random resblock, seeded extra_seed)."""
    from safetensors.torch import save_file
    unet_sd = load_safetensors(folder / "unet" / "diffusion_pytorch_model.safetensors")
    vae_sd = load_safetensors(folder / "vae" / "diffusion_pytorch_model.safetensors")
    te_sd = load_safetensors(folder / "text_encoder" / "model.safetensors")
    te_sd = {ldm_names.clip_key(k): v for k, v in te_sd.items() if not k.endswith("position_ids")}
    unet_cfg = json.loads((folder / "unet" / "config.json").read_text())
    vae_cfg = json.loads((folder / "vae" / "config.json").read_text())
    from transformers import CLIPTextConfig
    te_cfg = CLIPTextConfig.from_pretrained(str(folder / "text_encoder"))  # config.json omits some defaults
    sched_cfg = json.loads((folder / "scheduler" / "scheduler_config.json").read_text())
    n_layers = te_cfg.num_hidden_layers

    from diffusers import DDIMScheduler
    extra = {"alphas_cumprod": DDIMScheduler.from_config(sched_cfg).alphas_cumprod.float()}
    openclip_extra = None
    if text_kind == "clip":
        extra[ldm_names.CLIP_PREFIX + "text_model.embeddings.position_ids"] = \
            torch.arange(te_cfg.max_position_embeddings, dtype=torch.int64)[None]
    else:
        openclip_extra = tiny_models.openclip_extra_block(n_layers, te_cfg.hidden_size, te_cfg.intermediate_size,
                                                          extra_seed)
    ldm = ldm_names.to_ldm(unet_sd, unet_cfg, vae_sd, vae_cfg, te_sd, text_kind, openclip_extra, extra)
    save_file(ldm, str(ldm_path), metadata={"format": "pt"})
    log(f"wrote {ldm_path} ({len(ldm)} tensors, {ldm_path.stat().st_size} bytes)")

    # round trip through our own parser, from the file as written
    back = load_safetensors(ldm_path)
    u, v, t, unused = ldm_names.from_ldm(back, unet_cfg["layers_per_block"], len(vae_cfg["up_block_types"]),
                                         text_kind, n_layers)
    report = {"tensors": len(back), "unused_names": sorted(unused)}
    for what, got, want in (("unet", u, unet_sd), ("vae", v, vae_sd), ("text_encoder", t, te_sd)):
        if set(got) != set(want):
            raise AssertionError(f"{key} LDM round trip, {what}: names differ: "
                                 f"{sorted(set(got) ^ set(want))[:8]}")
        bad = [k for k in want if got[k].dtype != want[k].dtype or not torch.equal(got[k], want[k])]
        if bad:
            raise AssertionError(f"{key} LDM round trip, {what}: tensors differ: {bad[:5]}")
    log(f"{key}: LDM round trip (ldm_names) ok; names outside unet/vae/text: {sorted(unused)}")

    # and through diffusers' own single-file converters
    from diffusers.loaders import single_file_utils as sfu
    checks = {}
    conv_unet = sfu.convert_ldm_unet_checkpoint(back, unet_cfg)
    conv_vae = sfu.convert_ldm_vae_checkpoint(back, vae_cfg)
    if text_kind == "clip":
        conv_te = {k: x for k, x in sfu.convert_ldm_clip_checkpoint(back).items()
                   if not k.endswith("position_ids")}
    else:
        from transformers import CLIPTextModel
        holder = CLIPTextModel(te_cfg)
        conv_te = sfu.convert_open_clip_checkpoint(holder, back)
        # diffusers drops only resblock 23 (SD 2's real depth) and keeps the projection: ignore what the tiny
        # model does not have
        conv_te = {k: x for k, x in conv_te.items()
                   if not k.startswith(f"text_model.encoder.layers.{n_layers}.") and k != "text_projection.weight"}
    for what, got, want in (("unet", conv_unet, unet_sd), ("vae", conv_vae, vae_sd), ("text_encoder", conv_te, te_sd)):
        names_ok = set(got) == set(want)
        same = names_ok and all(torch.equal(got[k].to(want[k].dtype), want[k]) and
                                tuple(got[k].shape) == tuple(want[k].shape) for k in want)
        checks[what] = "ok" if same else (f"names differ: {sorted(set(got) ^ set(want))[:8]}" if not names_ok
                                          else "values differ")
    report["diffusers_single_file_converters"] = checks
    log(f"{key}: diffusers' single-file converters give back the diffusers weights: {checks}")
    if any(v != "ok" for v in checks.values()):
        raise AssertionError(f"{key}: diffusers' converters disagree with the LDM file: {checks}")
    return report


def for_each_model(fn, out):
    """Runs fn(key, out) for sd1 and sd2; a failure of one does not stop the other."""
    failed = []
    for key in ("sd1", "sd2"):
        try:
            fn(key, out)
        except Exception:
            traceback.print_exc()
            sys.stdout.flush()
            log(f"{key}: FAILED in {fn.__name__}")
            failed.append(key)
    if failed:
        raise RuntimeError(f"{fn.__name__} failed for {failed}")


LDM_REPORTS = {}


def make_models(out):
    LDM_REPORTS.clear()
    try:
        for_each_model(make_model, out)
    finally:
        write_json(out / "fixtures" / "ldm_check.json", {"about": "LDM single-file checks (make_fixtures.py)",
                                                        "versions": versions(), "models": LDM_REPORTS})


def make_model(key, out):
    spec = tiny_models.TINY[key]
    folder = out / spec["folder"]
    log(f"{key}: building")
    pipe = build_pipeline(key)
    mods = {"text_encoder": pipe.text_encoder, "unet": pipe.unet, "vae": pipe.vae}
    for name, m in mods.items():
        log(f"{key}: {name} {sum(p.numel() for p in m.parameters())} parameters")
    for m in mods.values():
        m.half()
    pipe.save_pretrained(str(folder), safe_serialization=True)
    for m in mods.values():
        m.float()
    fix_text_encoder_names(folder)
    fix_tokenizer_folder(folder, key)
    reloaded = load_pipeline(folder)
    for name, m in mods.items():
        assert_same_weights(m, getattr(reloaded, name), name)
    for prompt in TEXT_PROMPTS:
        a = pipe.tokenizer(prompt, padding="max_length", max_length=77, truncation=True).input_ids
        b = reloaded.tokenizer(prompt, padding="max_length", max_length=77, truncation=True).input_ids
        if a != b:
            raise AssertionError(f"{key}: reloaded tokenizer differs on {prompt!r}: {a} vs {b}")
    log(f"{key}: reloaded folder matches (weights, tokenizer); files: " + ", ".join(
        f"{p.relative_to(folder)} {p.stat().st_size}" for p in sorted(folder.rglob("*")) if p.is_file()))
    LDM_REPORTS[key] = write_ldm(key, folder, out / f"{spec['folder']}-ldm.safetensors")


# ---------------------------------------------------------------------------------------------------------------
# 4. component references (float64) from the saved folders

TEXT_PROMPTS = [
    "a red circle on a blue background",
    "blurry",
    "",
    "a photo of an astronaut riding a horse on the moon",
    "A PAINTING of a CAT, (highly detailed:1.2), 8k!!!",
    "it's a dog's life, isn't it? 1,000,000 stars",
    "café crème, naïve façade",
    "a very detailed painting of " * 20,
    "word " * 80,
]


def final_layer_norm(te):
    return te.text_model.final_layer_norm if hasattr(te, "text_model") else te.final_layer_norm


def make_components(out):
    for_each_model(make_component_refs, out)


@torch.no_grad()
def make_component_refs(key, out):
    spec = tiny_models.TINY[key]
    folder = out / spec["folder"]
    if not (folder / "model_index.json").exists():
        raise FileNotFoundError(f"{folder} is missing: the 'models' section must run first")
    pipe = load_pipeline(folder)
    fx = out / "fixtures"

    # text encoder
    te = copy.deepcopy(pipe.text_encoder).double().eval()
    ids = torch.stack([pipe.tokenizer(p, padding="max_length", max_length=77, truncation=True,
                                      return_tensors="pt").input_ids[0] for p in TEXT_PROMPTS])
    res = te(ids, output_hidden_states=True)
    hs = res.hidden_states
    t = {"input_ids": ids, "last_hidden_state": res.last_hidden_state,
         "clip_skip1": final_layer_norm(te)(hs[-2])}
    for i, h in enumerate(hs):
        t[f"hidden_states.{i}"] = h
    write_tensors(fx / f"text_encoder_{key}.safetensors", t)
    write_json(fx / f"text_encoder_{key}.json", {
        "model": f"tests/data/{spec['folder']}", "dtype": "computed in float64, stored as float32",
        "prompts": TEXT_PROMPTS, "ids": ids.tolist(),
        "tokenizer": f"{type(pipe.tokenizer).__name__} of the model folder (padding max_length 77, truncation)",
        "layouts": {"input_ids": "[N,77] int64", "last_hidden_state": "[N,77,D] after final_layer_norm",
                    "clip_skip1": "[N,77,D] final_layer_norm(hidden_states[-2]) (diffusers clip_skip=1)",
                    "hidden_states.K": "[N,77,D] K=0 embeddings, K=i output of layer i (before the final norm)"},
        "config": pipe.text_encoder.config.to_dict(), "versions": versions(),
        "tensor_shapes": tensor_index(t)})
    log(f"{key}: text encoder |last| max {float(res.last_hidden_state.abs().max()):.3f}")

    # UNet
    unet = copy.deepcopy(pipe.unet).double().eval()
    g = torch.Generator().manual_seed(spec["seed"] + 20)
    t = {}
    cases = {"a": (2, 8, 8), "b": (1, 9, 7)}
    timesteps = (999, 500, 1)
    for case, (batch, h, w) in cases.items():
        sample = torch.randn((batch, 4, h, w), generator=g)
        context = torch.randn((batch, 77, unet.config.cross_attention_dim), generator=g)
        t[f"sample.{case}"], t[f"context.{case}"] = sample, context
        for ts in timesteps:
            pred = unet(sample.double(), torch.full((batch,), ts, dtype=torch.int64),
                        encoder_hidden_states=context.double()).sample
            t[f"noise_pred.{case}.t{ts}"] = pred
            log(f"{key}: unet {case} t={ts} |pred| max {float(pred.abs().max()):.3f} std {float(pred.std()):.3f}")
    write_tensors(fx / f"unet_{key}.safetensors", t)
    write_json(fx / f"unet_{key}.json", {
        "model": f"tests/data/{spec['folder']}/unet", "dtype": "computed in float64, stored as float32",
        "inputs": {c: {"sample": f"sample.{c}", "context": f"context.{c}", "shape": [b, 4, h, w]}
                   for c, (b, h, w) in cases.items()},
        "timesteps": list(timesteps),
        "layouts": {"sample.X": "[B,4,H,W] NCHW", "context.X": "[B,77,32] encoder_hidden_states",
                    "noise_pred.X.tT": "[B,4,H,W]; the same timestep T for the whole batch"},
        "note": ("diffusers computes the sinusoidal timestep embedding in float32 even for a float64 model "
                 "(get_timestep_embedding), the rest runs in float64"),
        "config": dict(pipe.unet.config), "versions": versions(), "tensor_shapes": tensor_index(t)})

    # VAE
    vae = copy.deepcopy(pipe.vae).double().eval()
    g = torch.Generator().manual_seed(spec["seed"] + 30)
    t = {}
    for case, (h, w) in {"a": (8, 8), "b": (9, 7)}.items():
        z = torch.randn((1, 4, h, w), generator=g)
        t[f"latents.{case}"] = z
        t[f"decoded.{case}"] = vae.decode(z.double()).sample
    image = torch.rand((1, 3, 16, 16), generator=g) * 2 - 1
    dist = vae.encode(image.double()).latent_dist
    t["image"], t["encoded.mean"], t["encoded.logvar"] = image, dist.mean, dist.logvar
    write_tensors(fx / f"vae_{key}.safetensors", t)
    write_json(fx / f"vae_{key}.json", {
        "model": f"tests/data/{spec['folder']}/vae", "dtype": "computed in float64, stored as float32",
        "layouts": {"latents.X": "[1,4,H,W] as given to vae.decode (already divided by scaling_factor)",
                    "decoded.X": "[1,3,2H,2W] vae.decode(latents).sample, NCHW, not clamped",
                    "image": "[1,3,16,16] in [-1,1]", "encoded.mean": "[1,4,8,8] encode(image).latent_dist.mean",
                    "encoded.logvar": "[1,4,8,8] latent_dist.logvar (clamped to [-30,20] by diffusers)"},
        "scaling_factor": pipe.vae.config.scaling_factor,
        "config": dict(pipe.vae.config), "versions": versions(), "tensor_shapes": tensor_index(t)})
    log(f"{key}: vae decoded.a range [{float(t['decoded.a'].min()):.3f}, {float(t['decoded.a'].max()):.3f}]")


# ---------------------------------------------------------------------------------------------------------------
# 5. whole pipelines (fp32)

PIPELINE_ARGS = dict(prompt="a red circle on a blue background", negative_prompt="blurry", num_inference_steps=4,
                     guidance_scale=7.5, height=16, width=16, seed=1234, output_type="np")


def make_pipelines(out):
    for_each_model(make_pipeline_refs, out)


@torch.no_grad()
def make_pipeline_refs(key, out):
    spec = tiny_models.TINY[key]
    folder = out / spec["folder"]
    pipe = load_pipeline(folder)
    base_config = dict(pipe.scheduler.config)
    a = PIPELINE_ARGS
    t = {}
    cond, uncond = pipe.encode_prompt(a["prompt"], torch.device("cpu"), 1, True, a["negative_prompt"])
    t["prompt_embeds"], t["negative_prompt_embeds"] = cond, uncond
    h, w = a["height"] // pipe.vae_scale_factor, a["width"] // pipe.vae_scale_factor
    t["initial_noise"] = torch.randn((1, 4, h, w), generator=torch.Generator("cpu").manual_seed(a["seed"]))
    runs = []
    for name in PIPELINE_SCHEDULERS:
        pipe.scheduler = make_scheduler(name, base_config)
        seen_latents, seen_t = [], []

        def on_step(p, i, ts, kw):
            seen_latents.append(kw["latents"].detach().clone())
            seen_t.append(float(ts))
            return {}

        result = pipe(a["prompt"], negative_prompt=a["negative_prompt"],
                      num_inference_steps=a["num_inference_steps"], guidance_scale=a["guidance_scale"],
                      height=a["height"], width=a["width"],
                      generator=torch.Generator("cpu").manual_seed(a["seed"]), output_type=a["output_type"],
                      callback_on_step_end=on_step, callback_on_step_end_tensor_inputs=["latents"])
        image = torch.from_numpy(result.images.copy())
        t[f"{name}.image"] = image
        t[f"{name}.latents_steps"] = torch.stack(seen_latents)
        runs.append({"scheduler": name, "class": type(pipe.scheduler).__name__,
                     "config": dict(pipe.scheduler.config), "timesteps": seen_t,
                     "init_noise_sigma": float(pipe.scheduler.init_noise_sigma),
                     "sigmas": None if sigmas_of(pipe.scheduler) is None
                     else sigmas_of(pipe.scheduler).tolist(),
                     "tensors": {"image": f"{name}.image", "latents_steps": f"{name}.latents_steps"}})
        clipped = float(((image <= 0) | (image >= 1)).float().mean())
        log(f"{key}: pipeline {name}: timesteps {seen_t}, image mean {float(image.mean()):.4f}, "
            f"clamped fraction {clipped:.3f}")
    write_tensors(out / "fixtures" / f"pipeline_{key}.safetensors", t)
    ids = pipe.tokenizer([a["prompt"], a["negative_prompt"]], padding="max_length", max_length=77,
                         truncation=True).input_ids
    write_json(out / "fixtures" / f"pipeline_{key}.json", {
        "model": f"tests/data/{spec['folder']}",
        "pipeline": "diffusers StableDiffusionPipeline, fp32, CPU, safety_checker None",
        "args": a, "prompt_ids": ids[0], "negative_prompt_ids": ids[1],
        "generator": ("torch.Generator('cpu').manual_seed(seed), passed to the pipeline: it draws the initial "
                      "latents randn([1,4,H/2,W/2]) first; ancestral schedulers then draw their step noise "
                      "randn([1,4,H/2,W/2]) from the same generator, one draw per step"),
        "vae_scale_factor": pipe.vae_scale_factor, "vae_scaling_factor": pipe.vae.config.scaling_factor,
        "layouts": {"prompt_embeds": "[1,77,32] encode_prompt(prompt)",
                    "negative_prompt_embeds": "[1,77,32] encode_prompt(negative_prompt)",
                    "initial_noise": "[1,4,8,8] the pipeline's first draw (before * init_noise_sigma)",
                    "S.image": "[1,16,16,3] NHWC float in [0,1] (output_type 'np')",
                    "S.latents_steps": "[steps,1,4,8,8] latents after each scheduler step (the last one is "
                                       "what the VAE decodes after / scaling_factor)"},
        "runs": runs, "versions": versions(), "tensor_shapes": tensor_index(t)})


# ---------------------------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=pathlib.Path)
    ap.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections: " + ",".join(SECTIONS))
    args = ap.parse_args()
    wanted = [s for s in args.only.split(",") if s]
    unknown = set(wanted) - set(SECTIONS)
    if unknown:
        sys.exit(f"unknown sections: {sorted(unknown)}")
    args.out.mkdir(parents=True, exist_ok=True)
    log(f"versions: {versions()}, threads {torch.get_num_threads()}")
    import image_to_image
    import lora_fixtures
    import lora_sdxl_fixtures
    import prompt_weighting
    import real_checkpoints
    import sampler_fixtures
    import sdxl_fixtures
    import sdxl_refiner_fixtures
    import sdxl_inpaint9_fixtures
    import sdxl_refiner_inpaint_fixtures
    import sdxl_refiner_sde_fixtures
    import taesd_fixtures
    import vae_tiling_fixtures
    here = sys.modules[__name__]
    funcs = {"rng": make_rng, "schedulers": make_schedulers, "models": make_models,
             "components": make_components, "pipelines": make_pipelines,
             "realsched": lambda out: real_checkpoints.make_realsched(out, here),
             "tf5text": lambda out: real_checkpoints.make_tf5_text(out, here),
             "prompts": lambda out: prompt_weighting.make_prompt_fixtures(out, here),
             "img2img": lambda out: image_to_image.make_img2img_fixtures(out, here),
             "inpaint": lambda out: image_to_image.make_inpaint_fixtures(out, here),
             "samplers": lambda out: sampler_fixtures.make_sampler_schedulers(out, here),
             "samplerpipes": lambda out: sampler_fixtures.make_sampler_pipelines(out, here),
             "lora": lambda out: lora_fixtures.make_lora_fixtures(out, here),
             "vaetiling": lambda out: vae_tiling_fixtures.make_vae_tiling_fixtures(out, here),
             "taesd": lambda out: taesd_fixtures.make_taesd_fixtures(out, here),
             "sdxl": lambda out: sdxl_fixtures.make_sdxl_fixtures(out, here),
             "sdxlimg2img": lambda out: image_to_image.make_sdxl_img2img_fixtures(out, here),
             "sdxlnegmicro": lambda out: sdxl_fixtures.make_negative_microcond_refs(out, here),
             "sdxlrefiner": lambda out: sdxl_refiner_fixtures.make_refiner_fixtures(out, here),
             "lorasdxl": lambda out: lora_sdxl_fixtures.make_lora_sdxl_fixtures(out, here),
             "sdxlrefinerinpaint": lambda out: sdxl_refiner_inpaint_fixtures.make_refiner_inpaint_fixtures(out, here),
             "sdxlinpaint9": lambda out: sdxl_inpaint9_fixtures.make_sdxl_inpaint9_fixtures(out, here),
             "sdxlrefinersde": lambda out: sdxl_refiner_sde_fixtures.make_refiner_sde_fixtures(out, here)}
    failed = []
    for s in SECTIONS:
        if s not in wanted:
            continue
        log(f"=== section {s}")
        try:
            funcs[s](args.out)
            log(f"=== section {s}: ok")
        except Exception:
            traceback.print_exc()
            sys.stdout.flush()
            failed.append(s)
            log(f"=== section {s}: FAILED")
    log(f"done; failed sections: {failed or 'none'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
