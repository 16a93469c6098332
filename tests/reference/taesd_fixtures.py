"""Section `taesd` of make_fixtures.py (`--only taesd`, issue 21): diffusers 0.42.1's AutoencoderTiny (TAESD) with
random weights, saved in the layouts sdgen loads, and its outputs (float64 on the CPU, stored as float32).

Models (random weights, seeded, every value fp16-representable; the last convolution of the decoder and of the
encoder is rescaled on a probe input so that decoded pixels sit mostly inside [-1, 1] and latents have std ~1):
  tests/data/tiny-taesd/            diffusers folder (config.json + diffusion_pytorch_model.safetensors, fp16) with
                                    TAESD's own topology: 4 stages, encoder blocks (1,3,3,3), decoder blocks
                                    (3,3,3,1), scale factor 8, but 8 channels instead of 64.
  tests/data/tiny-taesd-madebyollin/taesd_encoder.safetensors, taesd_decoder.safetensors
                                    the same weights in madebyollin's original layout (fp32): the nn.Sequential
                                    indices, encoder `K.*` = diffusers `encoder.layers.K.*`, decoder `K.*` =
                                    diffusers `decoder.layers.(K-1).*` (madebyollin's decoder starts with a
                                    parameterless Clamp at index 0; diffusers'
                                    scripts/convert_tiny_autoencoder_to_diffusers.py does the same shift).
  tests/data/tiny-taesd-sd1/        diffusers folder (fp16), 2 stages (encoder blocks (1,2), decoder (2,1)), 8
                                    channels: scale factor 2 like tests/data/tiny-sd1's VAE, for whole pipelines.
  tests/data/tiny-taesd-sd1-madebyollin/taesd_decoder.safetensors  its decoder in madebyollin's layout (fp32).

What AutoencoderTiny computes (diffusers/models/autoencoders/vae.py):
  decode(z): x = tanh(z / 3) * 3; conv(4->C) + ReLU; per stage: blocks, [nearest 2x upsample, conv(C->C, no bias)
             except the last stage, whose conv is C->3 with bias]; output x * 2 - 1 (not clamped).
  encode(img): x = (img + 1) / 2; per stage: [conv(3->C) for the first, conv(C->C, stride 2, pad 1, no bias) for
             the others], blocks; conv(C->4). encode(...).latents has no distribution: no generator draw.
  block(x) = ReLU(conv3(ReLU(conv2(ReLU(conv1(x))))) + x)   (3x3 convs with bias, padding 1)
  scaling_factor 1.0: the pipelines decode latents / 1.0 and encode to latents * 1.0.

Fixtures:
  fixtures/taesd.{json,safetensors}  tiny-taesd: decode.{a,b}.latents [1,4,5,7] and [1,4,4,4] (seeded randn * 2.5,
      so that the tanh clamp bends some values), decode.{a,b}.image [1,3,8h,8w]; encode.image [1,3,40,24] in
      [-1,1], encode.latents [1,4,5,3]; sd1.decode.latents [1,4,9,7] / sd1.decode.image [1,3,18,14] and
      sd1.encode.image [1,3,16,24] / sd1.encode.latents [1,4,8,12] for tiny-taesd-sd1.
  fixtures/taesd_pipeline_sd1.{json,safetensors}  tests/data/tiny-sd1 with vae=tiny-taesd-sd1 (fp32, CPU):
      txt2img: StableDiffusionPipeline, the `pipelines` section's arguments (16x16, 4 steps, CFG 7.5, seed 1234),
        Euler: txt2img.image [1,16,16,3] in [0,1], txt2img.latents_steps [4,1,4,8,8], txt2img.previews
        [4,1,16,16,3] = VaeImageProcessor.postprocess(taesd.decode(latents after step k)) (what a preview is).
      img2img: StableDiffusionImg2ImgPipeline, fixtures/i2i_init.png (24x16), 6 steps, strength 0.75, seed 1234,
        Euler: img2img.image [1,16,24,3], img2img.init_image, img2img.image_latents (= encode(init).latents * 1.0),
        img2img.noise (the FIRST draw of the generator: TAESD's encoder draws nothing), img2img.init_latents,
        img2img.latents_steps. The script checks that order against the pipeline's prepared latents.
"""
import json
import shutil

import torch

import image_to_image
import tiny_models
from real_checkpoints import base_folder

SEED = 2140
CHANNELS = 8
TAESD = {  # folder: AutoencoderTiny keyword arguments
    "tiny-taesd": dict(encoder_block_out_channels=(CHANNELS,) * 4, decoder_block_out_channels=(CHANNELS,) * 4,
                       num_encoder_blocks=(1, 3, 3, 3), num_decoder_blocks=(3, 3, 3, 1), latent_channels=4),
    "tiny-taesd-sd1": dict(encoder_block_out_channels=(CHANNELS,) * 2, decoder_block_out_channels=(CHANNELS,) * 2,
                           num_encoder_blocks=(1, 2), num_decoder_blocks=(2, 1), latent_channels=4),
}
MADEBYOLLIN = {"tiny-taesd": "tiny-taesd-madebyollin", "tiny-taesd-sd1": "tiny-taesd-sd1-madebyollin"}
DECODE_CASES = {"a": (5, 7), "b": (4, 4)}  # latents, tiny-taesd
ENCODE_SIZE = (40, 24)  # pixels, tiny-taesd
SD1_DECODE = (9, 7)
SD1_ENCODE = (16, 24)
PIPELINE_SAMPLER = "euler"
I2I_STRENGTH = 0.75


def build_taesd(kwargs, seed):
    from diffusers import AutoencoderTiny
    torch.manual_seed(seed)
    model = AutoencoderTiny(**kwargs).eval()
    tiny_models.reinit_(model, seed)
    calibrate_(model, seed)
    return model


@torch.no_grad()
def calibrate_(model, seed):
    """Rescales the decoder's and the encoder's last convolution (weight and bias) so that, on a probe input, the
    decoder's pre-output activations have mean 0.5 / std 0.25 (decoded pixels mostly inside [-1, 1]) and the
    latents mean 0 / std 1; then rounds to fp16 again. Without it random ReLU stacks decode to a constant or to
    values far outside the image range, and a parity test on them would be weak."""
    g = torch.Generator().manual_seed(seed + 1)
    factor = 2 ** (len(model.config.decoder_block_out_channels) - 1)
    z = torch.randn((1, 4, 6, 6), generator=g) * 2.0
    pre = model.decoder.layers(torch.tanh(z / 3) * 3)
    fit_conv_(model.decoder.layers[-1], pre, 0.5, 0.25)
    image = torch.rand((1, 3, 6 * factor, 6 * factor), generator=g) * 2 - 1
    fit_conv_(model.encoder.layers[-1], model.encoder(image), 0.0, 1.0)
    tiny_models.round_to_fp16_(model)


def fit_conv_(conv, out, mean, std):
    s = std / float(out.std())
    conv.weight.data *= s
    conv.bias.data = conv.bias.data * s + (mean - s * float(out.mean()))


def madebyollin_state_dicts(model):
    """(encoder, decoder) state dicts under madebyollin's nn.Sequential indices (fp32)."""
    enc, dec = {}, {}
    for k, v in model.state_dict().items():
        head, _, rest = k.partition(".layers.")
        index, _, tail = rest.partition(".")
        if head == "encoder":
            enc[f"{int(index)}.{tail}"] = v.float().contiguous()
        elif head == "decoder":
            dec[f"{int(index) + 1}.{tail}"] = v.float().contiguous()
        else:
            raise KeyError(f"unexpected AutoencoderTiny tensor {k}")
    return enc, dec


def check_madebyollin(model, enc, dec, kwargs):
    """diffusers' conversion rule applied to the files gives back the model's tensors exactly."""
    from diffusers import AutoencoderTiny
    back = {f"encoder.layers.{k}": v for k, v in enc.items()}
    for k, v in dec.items():
        index, _, tail = k.partition(".")
        back[f"decoder.layers.{int(index) - 1}.{tail}"] = v
    other = AutoencoderTiny(**kwargs)
    other.load_state_dict(back, strict=True)
    for k, v in model.state_dict().items():
        if not torch.equal(other.state_dict()[k], v.float()):
            raise AssertionError(f"madebyollin layout: {k} differs after the round trip")


def save_folder(model, folder, h):
    """diffusers folder in fp16; reloads it and checks every tensor."""
    from diffusers import AutoencoderTiny
    if folder.exists():
        shutil.rmtree(folder)
    model.half().save_pretrained(str(folder), safe_serialization=True)
    model.float()
    back = AutoencoderTiny.from_pretrained(str(folder), torch_dtype=torch.float32, local_files_only=True)
    for k, v in model.state_dict().items():
        if not torch.equal(back.state_dict()[k], v):
            raise AssertionError(f"{folder}: {k} differs after save/load")
    files = sorted(p.name for p in folder.iterdir())
    h.log(f"taesd: wrote {folder}: {files}, {sum(p.stat().st_size for p in folder.iterdir())} bytes")
    return json.loads((folder / "config.json").read_text())


def save_madebyollin(model, kwargs, folder, h, parts=("encoder", "decoder")):
    from safetensors.torch import save_file
    enc, dec = madebyollin_state_dicts(model)
    check_madebyollin(model, enc, dec, kwargs)
    folder.mkdir(parents=True, exist_ok=True)
    for part, sd in (("encoder", enc), ("decoder", dec)):
        if part in parts:
            path = folder / f"taesd_{part}.safetensors"
            save_file(sd, str(path))
            h.log(f"taesd: wrote {path} ({len(sd)} tensors, {path.stat().st_size} bytes)")
    return {"encoder": sorted(enc), "decoder": sorted(dec)}


def describe(x):
    return f"[{float(x.min()):.3f}, {float(x.max()):.3f}] mean {float(x.mean()):.3f} std {float(x.std()):.3f}"


@torch.no_grad()
def make_taesd_fixtures(out, h):
    models, configs, keys = {}, {}, {}
    for i, (name, kwargs) in enumerate(TAESD.items()):
        model = build_taesd(kwargs, SEED + 10 * i)
        configs[name] = save_folder(model, out / name, h)
        models[name] = model
    for name, parts in (("tiny-taesd", ("encoder", "decoder")), ("tiny-taesd-sd1", ("decoder",))):
        keys[MADEBYOLLIN[name]] = save_madebyollin(models[name], TAESD[name], out / MADEBYOLLIN[name], h, parts)

    g = torch.Generator().manual_seed(SEED + 100)
    t = {}
    ref = models["tiny-taesd"].double()
    for case, (lh, lw) in DECODE_CASES.items():
        z = torch.randn((1, 4, lh, lw), generator=g) * 2.5
        t[f"decode.{case}.latents"], t[f"decode.{case}.image"] = z, ref.decode(z.double()).sample
        h.log(f"taesd: decode.{case} {lh}x{lw}: latents {describe(z)}, "
              f"|z| > 3 for {float((z.abs() > 3).float().mean()):.3f}, image {describe(t[f'decode.{case}.image'])}")
    ih, iw = ENCODE_SIZE
    image = torch.rand((1, 3, ih, iw), generator=g) * 2 - 1
    t["encode.image"], t["encode.latents"] = image, ref.encode(image.double()).latents
    h.log(f"taesd: encode {ih}x{iw}: latents {describe(t['encode.latents'])}")
    ref_sd1 = models["tiny-taesd-sd1"].double()
    z = torch.randn((1, 4) + SD1_DECODE, generator=g) * 2.5
    t["sd1.decode.latents"], t["sd1.decode.image"] = z, ref_sd1.decode(z.double()).sample
    image = torch.rand((1, 3) + SD1_ENCODE, generator=g) * 2 - 1
    t["sd1.encode.image"], t["sd1.encode.latents"] = image, ref_sd1.encode(image.double()).latents
    h.log(f"taesd: sd1 decode {describe(t['sd1.decode.image'])}, encode {describe(t['sd1.encode.latents'])}")
    fx = out / "fixtures"
    h.write_tensors(fx / "taesd.safetensors", t, limit=1 << 20)
    h.write_json(fx / "taesd.json", {
        "about": __doc__, "dtype": "computed in float64, stored as float32",
        "models": {"tiny-taesd": "tests/data/tiny-taesd", "madebyollin": "tests/data/tiny-taesd-madebyollin",
                   "tiny-taesd-sd1": "tests/data/tiny-taesd-sd1",
                   "sd1_madebyollin": "tests/data/tiny-taesd-sd1-madebyollin"},
        "configs": configs, "madebyollin_keys": keys, "seed": SEED,
        "layouts": {"decode.X.latents": "[1,4,h,w] as given to AutoencoderTiny.decode",
                    "decode.X.image": "[1,3,8h,8w] decode(latents).sample, NCHW, not clamped",
                    "encode.image": "[1,3,40,24] in [-1,1]", "encode.latents": "[1,4,5,3] encode(image).latents",
                    "sd1.decode.*": "the same for tiny-taesd-sd1 (scale factor 2)",
                    "sd1.encode.*": "[1,3,16,24] -> [1,4,8,12]"},
        "versions": h.versions(), "tensor_shapes": h.tensor_index(t)})
    make_pipeline_fixtures(out, h, out / "tiny-taesd-sd1")


@torch.no_grad()
def make_pipeline_fixtures(out, h, taesd_folder):
    from diffusers import AutoencoderTiny, StableDiffusionImg2ImgPipeline, StableDiffusionPipeline
    folder = base_folder(out, tiny_models.TINY["sd1"]["folder"])
    taesd = AutoencoderTiny.from_pretrained(str(taesd_folder), torch_dtype=torch.float32, local_files_only=True)
    # the tiny-sd1 pipeline with its VAE swapped for TAESD, as diffusers' docs do (pipe.vae = AutoencoderTiny...),
    # but through the constructor so that vae_scale_factor and the image processor follow the new VAE
    base = h.load_pipeline(folder)
    pipe = StableDiffusionPipeline(**dict(base.components, vae=taesd), requires_safety_checker=False)
    pipe.set_progress_bar_config(disable=True)
    if pipe.vae_scale_factor != 2 or type(pipe.vae).__name__ != "AutoencoderTiny":
        raise AssertionError(f"pipeline vae {type(pipe.vae).__name__}, scale factor {pipe.vae_scale_factor}")
    base_config = dict(pipe.scheduler.config)
    pipe.scheduler = h.make_scheduler(PIPELINE_SAMPLER, base_config)
    a = h.PIPELINE_ARGS
    seen = []

    def on_step(p, i, ts, kw):
        seen.append(kw["latents"].detach().clone())
        return {}

    result = pipe(a["prompt"], negative_prompt=a["negative_prompt"], num_inference_steps=a["num_inference_steps"],
                  guidance_scale=a["guidance_scale"], height=a["height"], width=a["width"],
                  generator=torch.Generator("cpu").manual_seed(a["seed"]), output_type="np",
                  callback_on_step_end=on_step, callback_on_step_end_tensor_inputs=["latents"])
    t = {"txt2img.image": torch.from_numpy(result.images.copy()), "txt2img.latents_steps": torch.stack(seen)}
    previews = []
    for latents in seen:
        decoded = taesd.decode(latents / taesd.config.scaling_factor).sample
        previews.append(pipe.image_processor.postprocess(decoded, output_type="pt").permute(0, 2, 3, 1))
    t["txt2img.previews"] = torch.stack(previews)
    last = float((t["txt2img.previews"][-1] - t["txt2img.image"]).abs().max())
    if last > 1e-6:
        raise AssertionError(f"the last preview is not the pipeline's image ({last})")
    h.log(f"taesd: txt2img {PIPELINE_SAMPLER}: image {describe(t['txt2img.image'])}, clamped "
          f"{float(((t['txt2img.image'] <= 0) | (t['txt2img.image'] >= 1)).float().mean()):.3f}")

    i2i = StableDiffusionImg2ImgPipeline(**pipe.components, requires_safety_checker=False)
    i2i.set_progress_bar_config(disable=True)
    i2i.scheduler = h.make_scheduler(PIPELINE_SAMPLER, base_config)
    pil, raw = image_to_image.write_inputs(out, h)
    init = i2i.image_processor.preprocess(pil["init"])
    image_to_image.assert_close(init, image_to_image.nchw(raw["init_rgb"]), "VaeImageProcessor's init image", tol=0)
    g = torch.Generator("cpu").manual_seed(image_to_image.IMG2IMG_SEED)
    image_latents = taesd.encode(init).latents * taesd.config.scaling_factor
    noise = torch.randn(image_latents.shape, generator=g)  # the first draw: TAESD's encoder draws nothing
    cap = image_to_image.Capture(i2i, "prepare_latents")
    image, steps, seen_t = image_to_image.run(i2i, image_to_image.IMG2IMG_SEED, image=pil["init"],
                                              strength=I2I_STRENGTH)
    t_start = image_to_image.t_start_of(I2I_STRENGTH)
    expected = image_to_image.add_noise_at_start(h, PIPELINE_SAMPLER, base_config, image_latents, noise, t_start)
    image_to_image.assert_close(cap.value, expected, "img2img: the pipeline's initial latents vs encode(init)"
                                ".latents and a first-draw noise")
    t.update({"img2img.image": image, "img2img.init_image": init, "img2img.image_latents": image_latents,
              "img2img.noise": noise, "img2img.init_latents": cap.value, "img2img.latents_steps": steps})
    h.log(f"taesd: img2img {PIPELINE_SAMPLER} strength {I2I_STRENGTH}: t_start {t_start}, timesteps {seen_t}, "
          f"image {describe(image)}")
    h.write_tensors(out / "fixtures" / "taesd_pipeline_sd1.safetensors", t, limit=1 << 20)
    h.write_json(out / "fixtures" / "taesd_pipeline_sd1.json", {
        "about": __doc__, "model": "tests/data/tiny-sd1", "taesd": "tests/data/tiny-taesd-sd1",
        "pipeline": "diffusers StableDiffusionPipeline / StableDiffusionImg2ImgPipeline with vae=AutoencoderTiny, "
                    "fp32, CPU, safety_checker None",
        "sampler": PIPELINE_SAMPLER, "scheduler_class": type(pipe.scheduler).__name__,
        "txt2img_args": a,
        "img2img_args": {"prompt": image_to_image.PROMPT, "negative_prompt": image_to_image.NEGATIVE,
                         "num_inference_steps": image_to_image.STEPS, "guidance_scale": image_to_image.GUIDANCE,
                         "seed": image_to_image.IMG2IMG_SEED, "width": image_to_image.WIDTH,
                         "height": image_to_image.HEIGHT, "strength": I2I_STRENGTH, "t_start": t_start,
                         "timesteps": seen_t, "init_image": "fixtures/i2i_init.png"},
        "taesd_scaling_factor": taesd.config.scaling_factor, "vae_scale_factor": pipe.vae_scale_factor,
        "layouts": {"txt2img.image": "[1,16,16,3] NHWC in [0,1]",
                    "txt2img.latents_steps": "[4,1,4,8,8] latents after each step",
                    "txt2img.previews": "[4,1,16,16,3] (taesd.decode(latents_k) / 2 + 0.5).clamp(0, 1), NHWC",
                    "img2img.image": "[1,16,24,3] NHWC in [0,1]", "img2img.init_image": "[1,3,16,24] in [-1,1]",
                    "img2img.image_latents": "[1,4,8,12] taesd.encode(init).latents * scaling_factor",
                    "img2img.noise": "[1,4,8,12] the generator's first draw",
                    "img2img.init_latents": "[1,4,8,12] add_noise(image_latents, noise, timesteps[t_start])",
                    "img2img.latents_steps": "[steps - t_start,1,4,8,12]"},
        "versions": h.versions(), "tensor_shapes": h.tensor_index(t)})
