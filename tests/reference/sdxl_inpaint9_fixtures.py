"""Section `sdxlinpaint9` of make_fixtures.py (issue 22): an SDXL inpainting UNet (9 input channels, as
diffusers/stable-diffusion-xl-1.0-inpainting-0.1) on tiny-sdxl, and diffusers 0.42.1's
StableDiffusionXLInpaintPipeline references (the 9-channel path: the UNet reads cat([scale_model_input(latents),
mask, masked image latents], channels); no blending).

tests/data/tiny-sdxl-inpaint/ holds what differs from tests/data/tiny-sdxl, as tiny-sd1-inpaint/ does for tiny-sd1:
  model_index.json  tiny-sdxl's with _class_name StableDiffusionXLInpaintPipeline and requires_aesthetics_score
                    false (the real inpainting-0.1 folder's)
  scheduler/        tiny-sdxl's file byte for byte
  unet/             tiny-sdxl's UNet config with in_channels 9, weights drawn by tiny_models.reinit_ (seed SEED),
                    fp16
The tests link tiny-sdxl's text_encoder, text_encoder_2, tokenizer, tokenizer_2 and vae beside them. The single file
is tiny-sdxl's (fixtures/ldm_map_sdxl.json) with this UNet: the script checks that the committed map, read with the
inpainting UNet as its "unet" component, reproduces the file ldm_names.to_ldm_sdxl writes, and that
StableDiffusionXLInpaintPipeline.from_single_file loads that file back to the folder's weights (conv_in [C, 9, 3, 3]).

Fixtures: fixtures/inpaint9_sdxl.{json,safetensors}, written by image_to_image.make_inpaint_case (the inpaint_*
tensors and checks: the documented order of draws, the mask, the masked image latents) with the 9-channel runs
INPAINT9_RUNS (Euler a 1.0, DDIM 0.75, DPM++ 2M 1.0), the grey mask, seed 4321, 6 steps, CFG 7.5, 16x24; and
fixtures/refiner_inpaint9_sdxl.{json,safetensors}: sdxl_refiner_inpaint_fixtures' base + refiner runs with this
9-channel base (REFINER_RUNS), the use diffusers documents for stable-diffusion-xl-1.0-inpainting-0.1.
"""
import json
import shutil
import tempfile

import torch

import image_to_image
import ldm_names
import sdxl_fixtures
import tiny_models
from real_checkpoints import base_folder

FOLDER = "tiny-sdxl-inpaint"
SEED = 3200
LINKED = ("text_encoder", "text_encoder_2", "tokenizer", "tokenizer_2", "vae")
# fixtures/refiner_inpaint9_sdxl (sdxl_refiner_inpaint_fixtures with this base): id -> (sampler, strength, switch)
REFINER_RUNS = {"euler.s100.f080": ("euler", 1.0, 0.8), "dpmpp_2m.s100.f050": ("dpmpp_2m", 1.0, 0.5)}


def log(h, msg):
    h.log(f"sdxlinpaint9: {msg}")


def make_sdxl_inpaint9_fixtures(out, h):
    with tempfile.TemporaryDirectory() as tmp:
        whole = write_model(out, h, tmp)
        check_single_file(out, h, whole, tmp)
        from diffusers import UNet2DConditionModel
        unet = UNet2DConditionModel.from_pretrained(str(whole / "unet"), torch_dtype=torch.float32).eval()
        image_to_image.make_inpaint_case(
            "sdxl_unet9", out, h, unet=unet,
            model=f"tests/data/{FOLDER} (unet, scheduler, model_index.json) + tests/data/{sdxl_fixtures.FOLDER} "
                  f"({', '.join(LINKED)})",
            single_file=f"fixtures/ldm_map_sdxl.json with tests/data/{FOLDER}/unet as its unet component")
        # the refiner after this base (diffusers' inpainting-0.1 + refiner-1.0): only the refiner blends
        import sdxl_refiner_inpaint_fixtures as refiner_inpaint
        refiner_inpaint.make_refiner_inpaint_fixtures(
            out, h, unet=unet, runs_wanted=REFINER_RUNS, name="refiner_inpaint9_sdxl",
            base_model=f"tests/data/{FOLDER} + tests/data/{sdxl_fixtures.FOLDER} (the 9-channel UNet)")


def write_model(out, h, tmp):
    """Writes out/tiny-sdxl-inpaint; returns a complete folder (tmp/tiny-sdxl-inpaint: the parts linked)."""
    from diffusers import StableDiffusionXLInpaintPipeline, UNet2DConditionModel
    import pathlib
    base = base_folder(out, sdxl_fixtures.FOLDER)
    torch.manual_seed(SEED)
    unet = UNet2DConditionModel(**dict(sdxl_fixtures.UNET, in_channels=9)).eval()
    tiny_models.reinit_(unet, SEED + 1)
    folder = out / FOLDER
    shutil.rmtree(folder, ignore_errors=True)
    unet.half()
    unet.save_pretrained(str(folder / "unet"), safe_serialization=True)
    shutil.copytree(base / "scheduler", folder / "scheduler")
    index = json.loads((base / "model_index.json").read_text(encoding="utf-8"))
    index["_class_name"] = "StableDiffusionXLInpaintPipeline"
    index["requires_aesthetics_score"] = False
    (folder / "model_index.json").write_text(json.dumps(index, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    whole = pathlib.Path(tmp) / FOLDER
    whole.mkdir()
    for part in ("unet", "scheduler", "model_index.json"):
        (whole / part).symlink_to((folder / part).resolve())
    for part in LINKED:
        (whole / part).symlink_to((base / part).resolve())
    pipe = StableDiffusionXLInpaintPipeline.from_pretrained(str(whole), torch_dtype=torch.float32,
                                                            local_files_only=True, add_watermarker=False)
    if pipe.unet.config.in_channels != 9 or pipe.config.requires_aesthetics_score:
        raise AssertionError(f"{folder}: unexpected configs {dict(pipe.unet.config)} / {dict(pipe.config)}")
    sdxl_fixtures.assert_same(unet.float(), pipe.unet, "unet")
    log(h, f"unet {sum(p.numel() for p in unet.parameters())} parameters; wrote {folder}: " + ", ".join(
        f"{p.relative_to(folder)} {p.stat().st_size}" for p in sorted(folder.rglob("*")) if p.is_file()))
    return whole


def check_single_file(out, h, whole, tmp):
    from diffusers import StableDiffusionXLInpaintPipeline
    from safetensors.torch import save_file
    comps = {"unet": h.load_safetensors(whole / "unet" / "diffusion_pytorch_model.safetensors"),
             "vae": h.load_safetensors(whole / "vae" / "diffusion_pytorch_model.safetensors"),
             "text_encoder": h.load_safetensors(whole / "text_encoder" / "model.safetensors"),
             "text_encoder_2": h.load_safetensors(whole / "text_encoder_2" / "model.safetensors")}
    for k in ("text_encoder", "text_encoder_2"):
        comps[k] = {n: v for n, v in comps[k].items() if not n.endswith("position_ids")}
    unet_cfg = json.loads((whole / "unet" / "config.json").read_text())
    vae_cfg = json.loads((whole / "vae" / "config.json").read_text())
    extras = sdxl_fixtures.ldm_extra_tensors()
    ldm = ldm_names.to_ldm_sdxl(comps["unet"], unet_cfg, comps["vae"], vae_cfg, comps["text_encoder"],
                                comps["text_encoder_2"], extras)
    if tuple(ldm["model.diffusion_model.input_blocks.0.0.weight"].shape[:2]) != (unet_cfg["block_out_channels"][0], 9):
        raise AssertionError("the single file's conv_in is not 9 channels wide")
    path = f"{tmp}/{FOLDER}-ldm.safetensors"
    save_file(ldm, path, metadata={"format": "pt"})
    map_path = out / "fixtures" / "ldm_map_sdxl.json"  # the sdxl section's, else the committed one
    if not map_path.exists():
        map_path = base_folder(out, sdxl_fixtures.FOLDER).parent / "fixtures" / "ldm_map_sdxl.json"
    committed = json.loads(map_path.read_text())
    entries = ldm_names.sdxl_ldm_map(comps["unet"], unet_cfg, comps["vae"], vae_cfg, comps["text_encoder"],
                                     comps["text_encoder_2"])
    if entries != committed["tensors"]:
        raise AssertionError("the inpainting UNet's single-file map differs from fixtures/ldm_map_sdxl.json")
    ldm_names.check_ldm_map(committed["tensors"], comps, extras, ldm)
    single = StableDiffusionXLInpaintPipeline.from_single_file(path, config=str(whole), local_files_only=True,
                                                               torch_dtype=torch.float16, add_watermarker=False)
    folder_pipe = StableDiffusionXLInpaintPipeline.from_pretrained(str(whole), torch_dtype=torch.float16,
                                                                   local_files_only=True, add_watermarker=False)
    for name in ("text_encoder", "text_encoder_2", "unet", "vae"):
        sdxl_fixtures.assert_same(getattr(folder_pipe, name), getattr(single, name), f"from_single_file {name}")
    log(h, "fixtures/ldm_map_sdxl.json with the inpainting UNet reproduces the single file, which diffusers' "
           "from_single_file loads back to the folder's weights")
