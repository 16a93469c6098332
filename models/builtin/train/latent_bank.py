"""A bank of VAE latents of rendered scenes, encoded once with the frozen VAE and kept on the training device.

The UNet phase then costs no rendering and no VAE encoder per step: a batch is a gather of bank rows. The bank
stores each scene's attributes rather than a caption, so every use of a scene draws a fresh caption template
(with or without size, position, background, or the empty caption); latents are re-sampled from the stored
posterior mean and standard deviation each time.
"""
from __future__ import annotations

import time

import torch

import scenes


class LatentBank:
    def __init__(self, mean, std, attributes):
        self.mean, self.std = mean, std  # [N, 4, h, w] float32, unscaled posterior parameters
        self.attributes = attributes      # dict name -> [N] long: color, shape, size, position, background
        probs = torch.tensor([p for _, p in scenes.TEMPLATES], dtype=torch.float64)
        self.template_cdf = (probs.cumsum(0) / probs.sum()).float().to(mean.device)

    @property
    def size(self) -> int:
        return self.mean.shape[0]

    @classmethod
    def build(cls, vae, count, generator, device, chunk=4096, log=print) -> "LatentBank":
        t0 = time.time()
        means, stds, attrs = [], [], {k: [] for k in ("color", "shape", "size", "position", "background")}
        with torch.no_grad():
            for start in range(0, count, chunk):
                batch = scenes.sample_scenes(min(chunk, count - start), generator, device)
                posterior = vae.encode(scenes.render(batch)).latent_dist  # fp32 (TF32): exact enough targets
                means.append(posterior.mean.float())
                stds.append(posterior.std.float())
                for key in attrs:
                    attrs[key].append(getattr(batch, key))
        bank = cls(torch.cat(means), torch.cat(stds), {k: torch.cat(v) for k, v in attrs.items()})
        if device.type == "cuda":
            torch.cuda.synchronize()
        log(f"latent bank: {count} scenes encoded in {time.time() - t0:.1f} s "
            f"({bank.mean.numel() * 8 / 1e6:.0f} MB of latents on {device})")
        return bank

    def sample_into(self, latents_out, caption_out, generator, scaling: float) -> None:
        """Fills latents_out [B, 4, h, w] with scaled posterior samples of random bank rows, and caption_out [B]
        with caption indices (scenes.all_captions order) of freshly drawn templates. In place, no host sync."""
        n = latents_out.shape[0]
        device = latents_out.device
        rows = torch.randint(0, self.size, (n,), generator=generator, device=device)
        eps = torch.randn(latents_out.shape, generator=generator, device=device)
        torch.mul(self.mean[rows] + self.std[rows] * eps, scaling, out=latents_out)
        u = torch.rand((n,), generator=generator, device=device)
        template = torch.searchsorted(self.template_cdf, u, right=True).clamp(max=len(scenes.TEMPLATES) - 1)
        a = {k: v[rows] for k, v in self.attributes.items()}
        caption_out.copy_(scenes.caption_index(template, a["size"], a["color"], a["shape"], a["position"],
                                               a["background"]))
