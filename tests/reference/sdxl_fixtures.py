"""Section `sdxl` of make_fixtures.py (issue 22): a tiny random SDXL-shaped diffusers folder and its references.

tiny-sdxl/ is a StableDiffusionXLPipeline folder shaped like stable-diffusion-xl-base-1.0, only small:
  text_encoder    tiny-sd1's CLIPTextModel, byte for byte (CLIP ViT-L's kind: quick_gelu, pads with <|endoftext|>;
                  hidden 32, 2 layers): git stores it once
  text_encoder_2  CLIPTextModelWithProjection (OpenCLIP bigG's kind: gelu, pads with "!", the legacy
                  bos/eos/pad ids 0/2/1 of the real config), hidden 16, 3 layers, projection_dim 24 (small: the
                  49408-token embedding dominates the file)
  tokenizer, tokenizer_2  the repository's CLIP vocabulary (vocab.json + merges.txt), pad "<|endoftext|>" and "!"
  unet            DownBlock2D then CrossAttnDownBlock2D (no attention at the first level), transformer depth 2
                  at the second level and in the middle block, linear projections, cross_attention_dim 48
                  (32 + 16), addition_embed_type "text_time", addition_time_embed_dim 8,
                  projection_class_embeddings_input_dim 24 + 6 * 8 = 72
  vae             tiny-sd1's weights byte for byte, its config with scaling_factor 0.13025 (SDXL's)
  scheduler       EulerDiscreteScheduler, leading spacing, steps_offset 1 (SDXL base's)
model_index.json has force_zeros_for_empty_prompt true (SDXL base's).
The same model as one SDXL single-file checkpoint (ldm_names.to_ldm_sdxl: label_emb,
conditioner.embedders.0.transformer.*, conditioner.embedders.1.model.* with fused in_proj and text_projection
[width, proj]) is written to tiny-sdxl-ldm.safetensors and checked by loading it with diffusers'
StableDiffusionXLPipeline.from_single_file; it is not kept (the size of the repository): fixtures/ldm_map_sdxl.json
says how each of its tensors is made from the folder's, and the tests write the file from that map (checked
here to reproduce the file exactly).

Fixtures (fixtures/*_sdxl.{json,safetensors}; components in float64 stored as float32, pipelines in float32):
  text_encoder_sdxl   both encoders on TEXT_PROMPTS: hidden_states[-2] (what SDXL conditions on), the last
                      hidden state and text_encoder_2's text_embeds (pooled, projected)
  unet_sdxl           noise predictions for seeded latents, contexts, text_embeds and time_ids at 3 timesteps
  vae_sdxl            decode of seeded latents, encode of a seeded image
  pipeline_sdxl       StableDiffusionXLPipeline images (16x24 pixels, seed 1234) per RUNS: default
                      micro-conditioning, explicit original_size/crops_coords_top_left/target_size, no negative
                      prompt (force_zeros_for_empty_prompt), and SDXL-Turbo style (guidance 0, Euler ancestral with
                      trailing spacing, 1 step); with encode_prompt's outputs and the add_time_ids of each run
  sdturbo_sd2         SD-Turbo style on tests/data/tiny-sd2 (SD 2.1's architecture): StableDiffusionPipeline,
                      guidance 0, Euler ancestral with trailing spacing, 1 and 2 steps
"""
import copy
import json

import torch

import ldm_names
import tiny_models
from real_checkpoints import base_folder

FOLDER = "tiny-sdxl"
SEED = 3000

TEXT = dict(hidden_size=32)  # tiny-sd1's text encoder (tiny_models.TINY["sd1"]["text"])
# The real text_encoder_2/config.json says bos 0, eos 2, pad 1: transformers then pools at argmax(input_ids),
# the first <|endoftext|> (the highest id), which is the same token as eos-id pooling for these tokenizers.
TEXT_2 = dict(vocab_size=49408, hidden_size=16, intermediate_size=32, num_hidden_layers=3, num_attention_heads=2,
              max_position_embeddings=77, hidden_act="gelu", projection_dim=24, layer_norm_eps=1e-5,
              bos_token_id=0, eos_token_id=2, pad_token_id=1)
ADD_TIME_DIM = 8
UNET = dict(sample_size=8, in_channels=4, out_channels=4, block_out_channels=(32, 64), layers_per_block=1,
            down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
            up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
            transformer_layers_per_block=(1, 2), cross_attention_dim=TEXT["hidden_size"] + TEXT_2["hidden_size"],
            attention_head_dim=(2, 4), norm_num_groups=32, use_linear_projection=True,
            addition_embed_type="text_time", addition_time_embed_dim=ADD_TIME_DIM,
            projection_class_embeddings_input_dim=TEXT_2["projection_dim"] + 6 * ADD_TIME_DIM)
VAE_SCALING_FACTOR = 0.13025
SCHEDULER = dict(tiny_models.SCHEDULER_SD15, interpolation_type="linear", use_karras_sigmas=False)

PROMPT = "a red circle on a blue background"
NEGATIVE = "blurry"
HEIGHT, WIDTH = 16, 24  # not square, so that a swapped width/height shows
PIPELINE_SEED = 1234
# name -> (scheduler name of make_fixtures.SCHEDULERS, spacing override or None, pipeline kwargs)
RUNS = {
    "default": ("euler", None, dict(negative_prompt=NEGATIVE, num_inference_steps=4, guidance_scale=5.0)),
    "microcond": ("euler", None, dict(negative_prompt=NEGATIVE, num_inference_steps=4, guidance_scale=5.0,
                                      original_size=(40, 56), crops_coords_top_left=(4, 8), target_size=(24, 32))),
    "no_negative": ("euler", None, dict(negative_prompt=None, num_inference_steps=4, guidance_scale=5.0)),
    "dpmpp_2m": ("dpmpp_2m", None, dict(negative_prompt=NEGATIVE, num_inference_steps=4, guidance_scale=5.0)),
    "turbo": ("euler_a", "trailing", dict(negative_prompt=None, num_inference_steps=1, guidance_scale=0.0)),
}


def log(h, msg):
    h.log(f"sdxl: {msg}")


def text_key(name):
    """On-disk names of a CLIPTextModel(WithProjection): 'text_model.*' and 'text_projection.*' (transformers 5
    keeps CLIPTextModel flat in memory, without the 'text_model.' level)."""
    return name if name.startswith(("text_model.", "text_projection.")) else "text_model." + name


def fix_text_encoder_names(h, folder, sub):
    from safetensors import safe_open
    from safetensors.torch import save_file
    path = folder / sub / "model.safetensors"
    with safe_open(str(path), framework="pt") as f:
        meta = f.metadata() or {}
        keys = list(f.keys())
    if all(text_key(k) == k for k in keys):
        return
    log(h, f"WARNING: {path} has names without 'text_model.' (e.g. {keys[0]}); renaming")
    sd = h.load_safetensors(path)
    save_file({text_key(k): v for k, v in sd.items()}, str(path), metadata=meta)


def fix_tokenizer_folders(h, folder):
    """Both tokenizers in SDXL base's layout: vocab.json + merges.txt (the pad token in tokenizer_config.json)."""
    for sub in ("tokenizer", "tokenizer_2"):
        d = folder / sub
        for f in ("vocab.json", "merges.txt"):
            (d / f).write_bytes((tiny_models.CLIP_VOCAB_DIR / f).read_bytes())
        (d / "tokenizer.json").unlink(missing_ok=True)
        log(h, f"{d}: {sorted(p.name for p in d.iterdir())}")


def build_pipeline(sd1):
    """sd1: the tiny-sd1 folder, whose text encoder and VAE weights tiny-sdxl shares."""
    from diffusers import AutoencoderKL, EulerDiscreteScheduler, StableDiffusionXLPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection
    torch.manual_seed(SEED)  # only the constructors' default init draws from it; every parameter is re-drawn
    te = CLIPTextModel.from_pretrained(str(sd1 / "text_encoder"), torch_dtype=torch.float32).eval()
    if te.config.hidden_size != TEXT["hidden_size"]:
        raise AssertionError(f"tiny-sd1's text encoder is {te.config.hidden_size} wide, expected {TEXT['hidden_size']}")
    te2 = CLIPTextModelWithProjection(CLIPTextConfig(**TEXT_2)).eval()
    unet = UNet2DConditionModel(**UNET).eval()
    vae = AutoencoderKL.from_pretrained(str(sd1 / "vae"), torch_dtype=torch.float32,
                                        scaling_factor=VAE_SCALING_FACTOR).eval()
    if vae.config.scaling_factor != VAE_SCALING_FACTOR:
        raise AssertionError(f"the VAE's scaling_factor is {vae.config.scaling_factor}")
    tiny_models.reinit_(te2, SEED + 2)
    tiny_models.reinit_(unet, SEED + 3)
    pipe = StableDiffusionXLPipeline(
        vae=vae, text_encoder=te, text_encoder_2=te2, tokenizer=tiny_models.clip_tokenizer("<|endoftext|>"),
        tokenizer_2=tiny_models.clip_tokenizer("!"), unet=unet,
        scheduler=EulerDiscreteScheduler.from_config(SCHEDULER), force_zeros_for_empty_prompt=True,
        add_watermarker=False)
    pipe.set_progress_bar_config(disable=True)
    return pipe


def load_pipeline(folder):
    from diffusers import StableDiffusionXLPipeline
    pipe = StableDiffusionXLPipeline.from_pretrained(str(folder), torch_dtype=torch.float32, local_files_only=True,
                                                     add_watermarker=False)
    pipe.set_progress_bar_config(disable=True)
    return pipe


def assert_same(a, b, what):
    sa = {text_key(k): v for k, v in a.state_dict().items() if not k.endswith("position_ids")}
    sb = {text_key(k): v for k, v in b.state_dict().items() if not k.endswith("position_ids")}
    if set(sa) != set(sb):
        raise AssertionError(f"{what}: reloaded names differ: {sorted(set(sa) ^ set(sb))[:8]}")
    bad = [k for k in sa if sa[k].dtype != sb[k].dtype or not torch.equal(sa[k], sb[k])]
    if bad:
        raise AssertionError(f"{what}: {len(bad)} reloaded tensors differ, e.g. {bad[:5]}")


def make_sdxl_fixtures(out, h):
    folder = write_model(out, h)
    make_text_encoder_refs(out, h, folder)
    make_unet_refs(out, h, folder)
    make_vae_refs(out, h, folder)
    make_pipeline_refs(out, h, folder)
    make_sdturbo_refs(out, h)
    write_ldm(out, h, folder)  # last: the references above do not depend on it


def share_sd1_files(h, folder, sd1):
    """tiny-sd1's text encoder and VAE weight files, byte for byte (same values: the repository stores them once)."""
    for rel in ("text_encoder/model.safetensors", "text_encoder/config.json",
                "vae/diffusion_pytorch_model.safetensors"):
        (folder / rel).write_bytes((sd1 / rel).read_bytes())
    log(h, f"shared with {sd1}: text_encoder/, vae weights")


def write_model(out, h):
    folder = out / FOLDER
    sd1 = base_folder(out, "tiny-sd1")
    pipe = build_pipeline(sd1)
    mods = ("text_encoder", "text_encoder_2", "unet", "vae")
    for name in mods:
        log(h, f"{name} {sum(p.numel() for p in getattr(pipe, name).parameters())} parameters")
        getattr(pipe, name).half()
    pipe.save_pretrained(str(folder), safe_serialization=True)
    for name in mods:
        getattr(pipe, name).float()
    fix_text_encoder_names(h, folder, "text_encoder_2")
    share_sd1_files(h, folder, sd1)
    fix_tokenizer_folders(h, folder)
    index = json.loads((folder / "model_index.json").read_text())
    if index.get("force_zeros_for_empty_prompt") is not True:
        raise AssertionError(f"model_index.json lacks force_zeros_for_empty_prompt: {index}")
    reloaded = load_pipeline(folder)
    for name in mods:
        assert_same(getattr(pipe, name), getattr(reloaded, name), name)
    for tok in ("tokenizer", "tokenizer_2"):
        for prompt in h.TEXT_PROMPTS:
            a = getattr(pipe, tok)(prompt, padding="max_length", max_length=77, truncation=True).input_ids
            b = getattr(reloaded, tok)(prompt, padding="max_length", max_length=77, truncation=True).input_ids
            if a != b:
                raise AssertionError(f"reloaded {tok} differs on {prompt!r}: {a} vs {b}")
    log(h, "reloaded folder matches (weights, tokenizers); files: " + ", ".join(
        f"{p.relative_to(folder)} {p.stat().st_size}" for p in sorted(folder.rglob("*")) if p.is_file()))
    return folder


@torch.no_grad()
def make_text_encoder_refs(out, h, folder):
    pipe = load_pipeline(folder)
    t = {}
    for i, (tok, te) in enumerate(((pipe.tokenizer, pipe.text_encoder), (pipe.tokenizer_2, pipe.text_encoder_2))):
        k = "" if i == 0 else "_2"
        model = copy.deepcopy(te).double().eval()
        ids = torch.stack([tok(p, padding="max_length", max_length=77, truncation=True,
                               return_tensors="pt").input_ids[0] for p in h.TEXT_PROMPTS])
        res = model(ids, output_hidden_states=True)
        t[f"input_ids{k}"] = ids
        t[f"penultimate{k}"] = res.hidden_states[-2]
        t[f"last_hidden_state{k}"] = res.last_hidden_state
        if i == 1:
            t["text_embeds_2"] = res.text_embeds
    fx = out / "fixtures"
    h.write_tensors(fx / "text_encoder_sdxl.safetensors", t)
    h.write_json(fx / "text_encoder_sdxl.json", {
        "model": f"tests/data/{FOLDER}", "dtype": "computed in float64, stored as float32",
        "prompts": h.TEXT_PROMPTS,
        "tokenizers": "tokenizer / tokenizer_2 of the folder (padding max_length 77, truncation)",
        "layouts": {"input_ids[_2]": "[N,77] int64 (tokenizer, tokenizer_2)",
                    "penultimate[_2]": "[N,77,D] hidden_states[-2]: the output of the next-to-last layer, no final "
                                       "layer norm (what SDXL's encode_prompt concatenates)",
                    "last_hidden_state[_2]": "[N,77,D] after final_layer_norm",
                    "text_embeds_2": "[N,24] text_encoder_2's text_embeds: text_projection(final_layer_norm(last "
                                     "layer)[first <|endoftext|>]), the pooled embedding SDXL conditions on"},
        "config": pipe.text_encoder.config.to_dict(), "config_2": pipe.text_encoder_2.config.to_dict(),
        "versions": h.versions(), "tensor_shapes": h.tensor_index(t)})


UNET_CASES = {"a": (2, 8, 8), "b": (1, 9, 7)}
UNET_TIMESTEPS = (999, 500, 1)
UNET_TIME_IDS = {"a": [[16, 24, 0, 0, 16, 24], [1024, 768, 32, 48, 512, 512]], "b": [[18, 14, 2, 6, 18, 14]]}


@torch.no_grad()
def make_unet_refs(out, h, folder):
    from diffusers import UNet2DConditionModel
    base = UNet2DConditionModel.from_pretrained(str(folder / "unet"), torch_dtype=torch.float32,
                                                local_files_only=True)
    unet = base.double().eval()
    g = torch.Generator().manual_seed(SEED + 20)
    t = {}
    for case, (batch, hh, ww) in UNET_CASES.items():
        sample = torch.randn((batch, 4, hh, ww), generator=g)
        context = torch.randn((batch, 77, UNET["cross_attention_dim"]), generator=g)
        text_embeds = torch.randn((batch, TEXT_2["projection_dim"]), generator=g)
        time_ids = torch.tensor(UNET_TIME_IDS[case], dtype=torch.float32)
        t[f"sample.{case}"], t[f"context.{case}"] = sample, context
        t[f"text_embeds.{case}"], t[f"time_ids.{case}"] = text_embeds, time_ids
        for ts in UNET_TIMESTEPS:
            pred = unet(sample.double(), torch.full((batch,), ts, dtype=torch.int64),
                        encoder_hidden_states=context.double(),
                        added_cond_kwargs={"text_embeds": text_embeds.double(), "time_ids": time_ids.double()}).sample
            t[f"noise_pred.{case}.t{ts}"] = pred
            log(h, f"unet {case} t={ts} |pred| max {float(pred.abs().max()):.3f} std {float(pred.std()):.3f}")
    fx = out / "fixtures"
    h.write_tensors(fx / "unet_sdxl.safetensors", t)
    h.write_json(fx / "unet_sdxl.json", {
        "model": f"tests/data/{FOLDER}/unet", "dtype": "computed in float64, stored as float32",
        "cases": {c: list(v) for c, v in UNET_CASES.items()}, "timesteps": list(UNET_TIMESTEPS),
        "layouts": {"sample.X": "[B,4,H,W] NCHW", "context.X": "[B,77,48] encoder_hidden_states",
                    "text_embeds.X": "[B,24] added_cond_kwargs text_embeds (the pooled embedding)",
                    "time_ids.X": "[B,6] added_cond_kwargs time_ids (original h,w, crop top,left, target h,w)",
                    "noise_pred.X.tT": "[B,4,H,W]; the same timestep T for the whole batch"},
        "note": ("diffusers computes the sinusoids of the timestep and of time_ids in float32 even for a float64 "
                 "model (get_timestep_embedding); the rest runs in float64. add_embedding's input is "
                 "concat(text_embeds, flatten(sinusoid(time_ids)))"),
        "config": dict(base.config), "versions": h.versions(), "tensor_shapes": h.tensor_index(t)})


@torch.no_grad()
def make_vae_refs(out, h, folder):
    from diffusers import AutoencoderKL
    base = AutoencoderKL.from_pretrained(str(folder / "vae"), torch_dtype=torch.float32, local_files_only=True)
    vae = base.double().eval()
    g = torch.Generator().manual_seed(SEED + 30)
    t = {}
    z = torch.randn((1, 4, 8, 12), generator=g)
    t["latents"], t["decoded"] = z, vae.decode(z.double()).sample
    image = torch.rand((1, 3, 16, 24), generator=g) * 2 - 1
    dist = vae.encode(image.double()).latent_dist
    t["image"], t["encoded.mean"], t["encoded.logvar"] = image, dist.mean, dist.logvar
    fx = out / "fixtures"
    h.write_tensors(fx / "vae_sdxl.safetensors", t)
    h.write_json(fx / "vae_sdxl.json", {
        "model": f"tests/data/{FOLDER}/vae", "dtype": "computed in float64, stored as float32",
        "layouts": {"latents": "[1,4,8,12] as given to vae.decode (already divided by scaling_factor)",
                    "decoded": "[1,3,16,24] vae.decode(latents).sample, not clamped",
                    "image": "[1,3,16,24] in [-1,1]", "encoded.mean": "[1,4,8,12]", "encoded.logvar": "[1,4,8,12]"},
        "scaling_factor": base.config.scaling_factor, "config": dict(base.config),
        "versions": h.versions(), "tensor_shapes": h.tensor_index(t)})


def run_pipeline(pipe, seed, **kwargs):
    seen_latents, seen_t = [], []

    def on_step(p, i, ts, kw):
        seen_latents.append(kw["latents"].detach().clone())
        seen_t.append(float(ts))
        return {}

    result = pipe(generator=torch.Generator("cpu").manual_seed(seed), output_type="np", callback_on_step_end=on_step,
                  callback_on_step_end_tensor_inputs=["latents"], **kwargs)
    return torch.from_numpy(result.images.copy()), torch.stack(seen_latents), seen_t


def scheduler_for(h, name, spacing, base_config):
    sched = h.make_scheduler(name, base_config)
    if spacing is not None:
        sched = type(sched).from_config(dict(sched.config), timestep_spacing=spacing)
    return sched


@torch.no_grad()
def make_pipeline_refs(out, h, folder):
    pipe = load_pipeline(folder)
    base_config = dict(pipe.scheduler.config)
    t = {}
    cpu = torch.device("cpu")
    pe, npe, pooled, npooled = pipe.encode_prompt(PROMPT, device=cpu, num_images_per_prompt=1,
                                                  do_classifier_free_guidance=True, negative_prompt=NEGATIVE)
    t["prompt_embeds"], t["negative_prompt_embeds"] = pe, npe
    t["pooled_prompt_embeds"], t["negative_pooled_prompt_embeds"] = pooled, npooled
    _, zero_npe, _, zero_npooled = pipe.encode_prompt(PROMPT, device=cpu, num_images_per_prompt=1,
                                                      do_classifier_free_guidance=True, negative_prompt=None)
    if float(zero_npe.abs().max()) != 0.0 or float(zero_npooled.abs().max()) != 0.0:
        raise AssertionError("force_zeros_for_empty_prompt did not zero the negative conditioning")
    runs = []
    proj_dim = pipe.text_encoder_2.config.projection_dim
    for name, (sampler, spacing, kwargs) in RUNS.items():
        pipe.scheduler = scheduler_for(h, sampler, spacing, base_config)
        add_time_ids = pipe._get_add_time_ids(
            tuple(kwargs.get("original_size", (HEIGHT, WIDTH))), tuple(kwargs.get("crops_coords_top_left", (0, 0))),
            tuple(kwargs.get("target_size", (HEIGHT, WIDTH))), dtype=torch.float32,
            text_encoder_projection_dim=proj_dim)
        image, latents, seen_t = run_pipeline(pipe, PIPELINE_SEED, prompt=PROMPT, height=HEIGHT, width=WIDTH,
                                              **kwargs)
        t[f"{name}.image"], t[f"{name}.latents_steps"], t[f"{name}.add_time_ids"] = image, latents, add_time_ids
        runs.append({"name": name, "sampler": sampler, "class": type(pipe.scheduler).__name__,
                     "config": dict(pipe.scheduler.config), "timesteps": seen_t,
                     "init_noise_sigma": float(pipe.scheduler.init_noise_sigma),
                     "args": dict(kwargs, prompt=PROMPT, height=HEIGHT, width=WIDTH, seed=PIPELINE_SEED),
                     "cfg": kwargs["guidance_scale"] > 1.0,
                     "tensors": {"image": f"{name}.image", "latents_steps": f"{name}.latents_steps",
                                 "add_time_ids": f"{name}.add_time_ids"}})
        log(h, f"pipeline {name}: timesteps {seen_t}, add_time_ids {add_time_ids.tolist()}, "
               f"image mean {float(image.mean()):.4f}, clamped {float(((image <= 0) | (image >= 1)).float().mean()):.3f}")
    fx = out / "fixtures"
    h.write_tensors(fx / "pipeline_sdxl.safetensors", t)
    ids = {tok: getattr(pipe, tok)([PROMPT, NEGATIVE], padding="max_length", max_length=77,
                                   truncation=True).input_ids for tok in ("tokenizer", "tokenizer_2")}
    h.write_json(fx / "pipeline_sdxl.json", {
        "model": f"tests/data/{FOLDER}",
        "pipeline": "diffusers StableDiffusionXLPipeline, fp32, CPU, add_watermarker False",
        "prompt": PROMPT, "negative_prompt": NEGATIVE, "height": HEIGHT, "width": WIDTH, "seed": PIPELINE_SEED,
        "prompt_ids": ids["tokenizer"][0], "negative_prompt_ids": ids["tokenizer"][1],
        "prompt_ids_2": ids["tokenizer_2"][0], "negative_prompt_ids_2": ids["tokenizer_2"][1],
        "generator": ("torch.Generator('cpu').manual_seed(seed) passed to the pipeline: initial latents "
                      "randn([1,4,H/2,W/2]) first, then ancestral step noise from the same generator"),
        "vae_scale_factor": pipe.vae_scale_factor, "vae_scaling_factor": pipe.vae.config.scaling_factor,
        "force_zeros_for_empty_prompt": pipe.config.force_zeros_for_empty_prompt,
        "layouts": {"prompt_embeds": "[1,77,48] encode_prompt: concat(hidden_states[-2] of text_encoder, of "
                                     "text_encoder_2) along channels",
                    "negative_prompt_embeds": "[1,77,48] the same for the negative prompt 'blurry'",
                    "pooled_prompt_embeds": "[1,24] text_encoder_2's text_embeds of the prompt",
                    "negative_pooled_prompt_embeds": "[1,24] of the negative prompt",
                    "R.add_time_ids": "[1,6] original_size (h,w) + crops_coords_top_left (top,left) + target_size "
                                      "(h,w); the negative conditioning uses the same ids",
                    "R.image": "[1,16,24,3] NHWC float in [0,1]",
                    "R.latents_steps": "[steps,1,4,8,12] latents after each scheduler step"},
        "runs": runs, "versions": h.versions(), "tensor_shapes": h.tensor_index(t)})


# Section `sdxlnegmicro` (issue 22): the unconditional half's own micro-conditioning (diffusers' negative_original_size,
# negative_crops_coords_top_left, negative_target_size: used only when both sizes are given).
NEGMICRO_RUNS = {
    "negative_sizes": dict(negative_original_size=(8, 12), negative_target_size=(40, 56)),
    "negative_sizes_crop": dict(original_size=(40, 56), crops_coords_top_left=(4, 8), target_size=(24, 32),
                                negative_original_size=(8, 12), negative_crops_coords_top_left=(2, 6),
                                negative_target_size=(40, 56)),
}


@torch.no_grad()
def make_negative_microcond_refs(out, h):
    folder = base_folder(out, FOLDER)
    pipe = load_pipeline(folder)
    base_config = dict(pipe.scheduler.config)
    proj_dim = pipe.text_encoder_2.config.projection_dim
    t, runs = {}, []
    for name, micro in NEGMICRO_RUNS.items():
        kwargs = dict(negative_prompt=NEGATIVE, num_inference_steps=4, guidance_scale=5.0, **micro)
        pipe.scheduler = scheduler_for(h, "euler", None, base_config)
        ids = pipe._get_add_time_ids(tuple(micro.get("original_size", (HEIGHT, WIDTH))),
                                     tuple(micro.get("crops_coords_top_left", (0, 0))),
                                     tuple(micro.get("target_size", (HEIGHT, WIDTH))), dtype=torch.float32,
                                     text_encoder_projection_dim=proj_dim)
        negative_ids = pipe._get_add_time_ids(tuple(micro["negative_original_size"]),
                                              tuple(micro.get("negative_crops_coords_top_left", (0, 0))),
                                              tuple(micro["negative_target_size"]), dtype=torch.float32,
                                              text_encoder_projection_dim=proj_dim)
        image, latents, seen_t = run_pipeline(pipe, PIPELINE_SEED, prompt=PROMPT, height=HEIGHT, width=WIDTH, **kwargs)
        plain, _, _ = run_pipeline(pipe, PIPELINE_SEED, prompt=PROMPT, height=HEIGHT, width=WIDTH,
                                   **{k: v for k, v in kwargs.items() if not k.startswith("negative_") or
                                      k == "negative_prompt"})
        moved = float((image - plain).abs().mean()) * 255
        if moved <= 2.0:
            raise AssertionError(f"{name}: the negative micro-conditioning moves the image by {moved:.3f}/255 only")
        t[f"{name}.image"], t[f"{name}.latents_steps"] = image, latents
        t[f"{name}.add_time_ids"], t[f"{name}.negative_add_time_ids"] = ids, negative_ids
        t[f"{name}.image_without_negative_micro"] = plain
        runs.append({"name": name, "sampler": "euler", "class": type(pipe.scheduler).__name__, "timesteps": seen_t,
                     "args": dict(kwargs, prompt=PROMPT, height=HEIGHT, width=WIDTH, seed=PIPELINE_SEED),
                     "moved_by_negative_micro_x255": moved})
        log(h, f"negative micro-conditioning {name}: add_time_ids {ids.tolist()}, negative {negative_ids.tolist()}, "
               f"moves the image by {moved:.3f}/255")
    fx = out / "fixtures"
    h.write_tensors(fx / "pipeline_sdxl_negmicro.safetensors", t)
    h.write_json(fx / "pipeline_sdxl_negmicro.json", {
        "model": f"tests/data/{FOLDER}",
        "pipeline": "diffusers StableDiffusionXLPipeline, fp32, CPU, add_watermarker False",
        "about": "negative_original_size / negative_crops_coords_top_left / negative_target_size (sdxl_fixtures.py)",
        "layouts": {"R.add_time_ids": "[1,6] the conditional half's", "R.negative_add_time_ids": "[1,6] the "
                    "unconditional half's", "R.image": "[1,16,24,3] NHWC float in [0,1]",
                    "R.image_without_negative_micro": "the same run without the negative_* arguments"},
        "runs": runs, "versions": h.versions(), "tensor_shapes": h.tensor_index(t)})


SDTURBO_STEPS = (1, 2)


@torch.no_grad()
def make_sdturbo_refs(out, h):
    """SD-Turbo is SD 2.1's architecture sampled at 1-4 steps without guidance (guidance_scale 0)."""
    pipe = h.load_pipeline(base_folder(out, "tiny-sd2"))
    base_config = dict(pipe.scheduler.config)
    t, runs = {}, []
    for steps in SDTURBO_STEPS:
        pipe.scheduler = scheduler_for(h, "euler_a", "trailing", base_config)
        name = f"s{steps}"
        image, latents, seen_t = run_pipeline(pipe, PIPELINE_SEED, prompt=PROMPT, num_inference_steps=steps,
                                              guidance_scale=0.0, height=16, width=16)
        t[f"{name}.image"], t[f"{name}.latents_steps"] = image, latents
        runs.append({"name": name, "steps": steps, "class": type(pipe.scheduler).__name__,
                     "config": dict(pipe.scheduler.config), "timesteps": seen_t,
                     "tensors": {"image": f"{name}.image", "latents_steps": f"{name}.latents_steps"}})
        log(h, f"sd-turbo {name}: timesteps {seen_t}, image mean {float(image.mean()):.4f}")
    fx = out / "fixtures"
    h.write_tensors(fx / "sdturbo_sd2.safetensors", t)
    h.write_json(fx / "sdturbo_sd2.json", {
        "model": "tests/data/tiny-sd2",
        "pipeline": "diffusers StableDiffusionPipeline, fp32, CPU, guidance_scale 0.0 (no unconditional pass), "
                    "EulerAncestralDiscreteScheduler with timestep_spacing 'trailing' (as SD-Turbo's config)",
        "prompt": PROMPT, "height": 16, "width": 16, "seed": PIPELINE_SEED,
        "layouts": {"S.image": "[1,16,16,3] NHWC float in [0,1]", "S.latents_steps": "[steps,1,4,8,8]"},
        "runs": runs, "versions": h.versions(), "tensor_shapes": h.tensor_index(t)})


# LDM-only tensors of the single file (what real SDXL files hold beside the weights; a loader must skip them), as
# values a test can rebuild: {key: (dtype, shape, "arange" | fill value)}.
LDM_EXTRAS = {
    "alphas_cumprod": ("F32", [1000], 0.5),
    ldm_names.SDXL_CLIP_PREFIX + "text_model.embeddings.position_ids": ("I64", [1, 77], "arange"),
    ldm_names.SDXL_OPENCLIP_PREFIX + "logit_scale": ("F16", [], 4.60546875),
}


def ldm_extra_tensors():
    dtypes = {"F32": torch.float32, "F16": torch.float16, "I64": torch.int64}
    out = {}
    for key, (dtype, shape, value) in LDM_EXTRAS.items():
        if value == "arange":
            out[key] = torch.arange(int(torch.tensor(shape).prod()), dtype=dtypes[dtype]).reshape(shape)
        else:
            out[key] = torch.full(shape, value, dtype=dtypes[dtype])
    return out


def write_ldm(out, h, folder):
    from diffusers import StableDiffusionXLPipeline
    from safetensors.torch import save_file
    comps = {
        "unet": h.load_safetensors(folder / "unet" / "diffusion_pytorch_model.safetensors"),
        "vae": h.load_safetensors(folder / "vae" / "diffusion_pytorch_model.safetensors"),
        "text_encoder": h.load_safetensors(folder / "text_encoder" / "model.safetensors"),
        "text_encoder_2": h.load_safetensors(folder / "text_encoder_2" / "model.safetensors"),
    }
    for k in ("text_encoder", "text_encoder_2"):
        comps[k] = {n: v for n, v in comps[k].items() if not n.endswith("position_ids")}
    unet_cfg = json.loads((folder / "unet" / "config.json").read_text())
    vae_cfg = json.loads((folder / "vae" / "config.json").read_text())
    extras = ldm_extra_tensors()
    ldm = ldm_names.to_ldm_sdxl(comps["unet"], unet_cfg, comps["vae"], vae_cfg, comps["text_encoder"],
                                comps["text_encoder_2"], extras)
    path = out / f"{FOLDER}-ldm.safetensors"
    save_file(ldm, str(path), metadata={"format": "pt"})
    log(h, f"wrote {path} ({len(ldm)} tensors, {path.stat().st_size} bytes)")

    # The recipe the tests write the file from must give exactly these tensors.
    entries = ldm_names.sdxl_ldm_map(comps["unet"], unet_cfg, comps["vae"], vae_cfg, comps["text_encoder"],
                                     comps["text_encoder_2"])
    ldm_names.check_ldm_map(entries, comps, extras, ldm)
    h.write_json(out / "fixtures" / "ldm_map_sdxl.json", {
        "about": ("tiny-sdxl as one SDXL single-file checkpoint: every tensor of tiny-sdxl-ldm.safetensors as made "
                  "from the folder's files (sdxl_fixtures.write_ldm checks the map reproduces the file that "
                  "diffusers' from_single_file loads back to the folder's weights). ops: copy; cat0 (fused q,k,v "
                  "in_proj); transpose (OpenCLIP text_projection [width, proj]); conv1x1 (the VAE attention's "
                  "linear weights as [C, C, 1, 1]). Every float tensor is stored as F16, as in the folder."),
        "folder": f"tests/data/{FOLDER}",
        "components": {"unet": "unet/diffusion_pytorch_model.safetensors",
                       "vae": "vae/diffusion_pytorch_model.safetensors",
                       "text_encoder": "text_encoder/model.safetensors",
                       "text_encoder_2": "text_encoder_2/model.safetensors"},
        "extras": {k: {"dtype": d, "shape": sh, "value": v} for k, (d, sh, v) in LDM_EXTRAS.items()},
        "tensors": entries})

    single = StableDiffusionXLPipeline.from_single_file(str(path), config=str(folder), local_files_only=True,
                                                        torch_dtype=torch.float16, add_watermarker=False)
    folder_pipe = StableDiffusionXLPipeline.from_pretrained(str(folder), torch_dtype=torch.float16,
                                                            local_files_only=True, add_watermarker=False)
    for name in ("text_encoder", "text_encoder_2", "unet", "vae"):
        assert_same(getattr(folder_pipe, name), getattr(single, name), f"from_single_file {name}")
    log(h, "diffusers' from_single_file gives back the folder's weights (text_encoder, text_encoder_2, unet, vae)")
