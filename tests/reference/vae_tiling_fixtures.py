"""Section `vaetiling` of make_fixtures.py (issue 21): diffusers 0.42.1's AutoencoderKL with enable_tiling() on
tests/data/tiny-sd1's VAE, computed in float64 on the CPU and stored as float32 (fixtures/vae_tiling_sd1.*).

The tiny VAE's config has sample_size 16 and two block levels (scale factor 2), so diffusers tiles with
tile_sample_min_size = 16 pixels, tile_latent_min_size = 8 latents, tile_overlap_factor 0.25:
  decode: tiles of 8x8 latents every 6 latents, blended over 4 pixels, each cropped to 12x12 pixels;
  encode: tiles of 16x16 pixels every 12 pixels, blended over 2 latents, each cropped to 6x6 latents.
The sizes below tile in both directions and end in narrower edge tiles (one of 1 latent / 2 pixels, narrower
than the blend extent, which diffusers then shrinks to the tile's width).

Tensors (NCHW):
  decode.<case>.latents  [1,4,H,W] seeded randn, as given to vae.decode (already divided by scaling_factor)
  decode.<case>.image    [1,3,2H,2W] vae.decode(latents).sample with tiling enabled, not clamped
  encode.image           [1,3,40,26] seeded uniform in [-1, 1]
  encode.mean, encode.logvar  [1,4,20,13] vae.encode(image).latent_dist with tiling enabled (logvar clamped to
                         [-30, 20] by DiagonalGaussianDistribution)
Cases: "a" 20x13 latents (tiled both ways), "b" 8x12 (one row of tiles: diffusers tiles when either side is
larger than tile_latent_min_size), "c" 8x8 (not tiled: equal to the tile size, the plain decode).
"""
import torch

from real_checkpoints import base_folder

SEED = 2121
DECODE_CASES = {"a": (20, 13), "b": (8, 12), "c": (8, 8)}
ENCODE_SIZE = (40, 26)  # pixels, H x W


@torch.no_grad()
def make_vae_tiling_fixtures(out, h):
    from diffusers import AutoencoderKL
    folder = base_folder(out, "tiny-sd1")
    vae = AutoencoderKL.from_pretrained(str(folder / "vae"), torch_dtype=torch.float32, local_files_only=True)
    vae = vae.double().eval()
    vae.enable_tiling()
    geometry = {"tile_sample_min_size": vae.tile_sample_min_size, "tile_latent_min_size": vae.tile_latent_min_size,
                "tile_overlap_factor": vae.tile_overlap_factor}
    if geometry != {"tile_sample_min_size": 16, "tile_latent_min_size": 8, "tile_overlap_factor": 0.25}:
        raise RuntimeError(f"unexpected tiling geometry {geometry}: the fixture sizes were chosen for 16/8/0.25")

    g = torch.Generator().manual_seed(SEED)
    t = {}
    for case, (lh, lw) in DECODE_CASES.items():
        z = torch.randn((1, 4, lh, lw), generator=g)
        image = vae.decode(z.double()).sample
        if tuple(image.shape) != (1, 3, 2 * lh, 2 * lw):
            raise RuntimeError(f"decode.{case}: tiled output {tuple(image.shape)}")
        t[f"decode.{case}.latents"], t[f"decode.{case}.image"] = z, image
        vae.disable_tiling()
        plain = vae.decode(z.double()).sample
        vae.enable_tiling()
        diff = float((plain - image).abs().max())
        h.log(f"vaetiling: decode.{case} {lh}x{lw} latents, max |tiled - plain| {diff:.4g}")
        if (case == "c") != (diff == 0.0):
            raise RuntimeError(f"decode.{case}: tiled and plain decodes {'differ' if case == 'c' else 'agree'}")

    ih, iw = ENCODE_SIZE
    image = torch.rand((1, 3, ih, iw), generator=g) * 2 - 1
    dist = vae.encode(image.double()).latent_dist
    t["encode.image"], t["encode.mean"], t["encode.logvar"] = image, dist.mean, dist.logvar
    vae.disable_tiling()
    plain = vae.encode(image.double()).latent_dist.mean
    h.log(f"vaetiling: encode {ih}x{iw} pixels, max |tiled - plain| mean {float((plain - dist.mean).abs().max()):.4g}")

    fx = out / "fixtures"
    h.write_tensors(fx / "vae_tiling_sd1.safetensors", t, limit=1 << 20)
    h.write_json(fx / "vae_tiling_sd1.json", {
        "about": __doc__,
        "model": "tests/data/tiny-sd1/vae", "dtype": "computed in float64, stored as float32",
        "seed": SEED, "geometry": geometry,
        "decode_cases": {k: list(v) for k, v in DECODE_CASES.items()}, "encode_size": list(ENCODE_SIZE),
        "scaling_factor": vae.config.scaling_factor,
        "versions": h.versions(), "tensor_shapes": h.tensor_index(t)})
