#!/usr/bin/env python3
"""Trains sdgen-tiny, sdgen's built-in text-to-image model, and writes everything the repository keeps of it.

  scripts/device/train-builtin.sh full --vae-init models/builtin/sdgen-tiny/vae   # on an NVIDIA H100
  python3 models/builtin/train/train.py --mode tiny --output-root /tmp/x          # a few steps on a CPU
  (--mode smoke: the GPU code paths in ~2 minutes; --mode resume --resume FOLDER: continue a saved model)

Phases: (1) the VAE on scenes rendered on the fly (L1 + L2 + image-gradient L1 reconstruction, small KL),
optionally continuing a saved VAE (--vae-init); then frozen; (2) a bank of VAE latents of --bank scenes, encoded
once and kept on the GPU, its standard deviation setting the scaling factor; (3) UNet and CLIP text encoder
together from the bank (epsilon prediction, SD 1.x's scaled-linear 1000-step schedule, min-SNR-5 loss weights,
fused AdamW, bf16 autocast, EMA of the weights); (4) the EMA weights saved as a diffusers folder in fp16; (5) a
sampler/guidance sweep over the 189-prompt evaluation grid with diffusers' pipeline loaded from that folder, the
best setting becoming sdgen's default (sdgen.json); (6) the engine parity fixture on the CPU; (7) loss curves,
sample grids and the evaluation record under docs/builtin/.

Speed: these networks are tiny, so an eager step is bound by Python and kernel launches (~140 ms whatever the
batch). On CUDA each training step (forward, backward, clipping, optimizer, EMA) is captured once as a CUDA graph
and replayed (graphed_step.py); batches are refilled in place between replays.

Time: the run is planned against wall-clock deadlines measured from TRAIN_T0 (seconds since the epoch, set by
the device script when it starts; else the script's start): the VAE gets --vae-seconds, the UNet trains until
--unet-until, the sweep skips its remaining candidates after --sweep-until. Each phase times its first replayed
steps and sets its step count (and so its learning-rate schedule) to end at its deadline; --vae-steps /
--unet-steps fix the counts instead, and docs/builtin/train_record.json records them, so a run can be repeated.
Every scene, caption and noise draw comes from generators seeded by --seed; cuDNN picks its fastest (not
bitwise deterministic) algorithms, so a repeat matches statistically, not bit for bit.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import architecture  # noqa: E402
import graphed_step  # noqa: E402
import pipeline_eval  # noqa: E402
import reference_fixture  # noqa: E402
import scenes  # noqa: E402
import semantic_grid  # noqa: E402
import text_forward  # noqa: E402
from latent_bank import LatentBank  # noqa: E402

REPO = HERE.parents[2]
MODEL_REL = "models/builtin/sdgen-tiny"
FIXTURE_REL = "tests/data/fixtures/builtin_reference"
DOCS_REL = "docs/builtin"
WEIGHT_LIMIT_BYTES = 25_000_000

# Sweep candidates (sampler, steps, cfg), most wanted first: the sweep drops the tail when it runs out of time.
FULL_SWEEP = [("dpmpp_2m", 10, 3.0), ("euler_a", 16, 3.0), ("dpmpp_2m", 10, 5.0), ("dpmpp_2m", 16, 3.0),
              ("euler_a", 12, 3.0), ("dpmpp_2m", 8, 3.0), ("euler_a", 16, 5.0), ("dpmpp_2m", 16, 5.0)]

MODES = {
    # seconds are wall-clock deadlines: vae_seconds from the VAE phase's start, unet_until / sweep_until from T0
    "full": dict(vae_batch=256, vae_seconds=130, vae_lr=1e-3, vae_warmup=100, bank=200_000, batch=1024,
                 unet_until=420, lr=1e-3, warmup=200, sweep_until=475, sweep=FULL_SWEEP, grid="eval",
                 loss_every=25, log_every=500),
    "smoke": dict(vae_batch=256, vae_seconds=15, vae_lr=1e-3, vae_warmup=100, bank=20_000, batch=1024,
                  unet_until=90, lr=1e-3, warmup=200, sweep_until=130, sweep=FULL_SWEEP[:3], grid="eval",
                  loss_every=25, log_every=100),
    # Continues a saved model (--resume): UNet + text encoder only, the VAE kept as it is.
    "resume": dict(vae_batch=256, vae_seconds=0, vae_lr=1e-3, vae_warmup=100, bank=200_000, batch=1024,
                   unet_until=320, lr=5e-4, warmup=100, sweep_until=375, sweep=FULL_SWEEP, grid="eval",
                   loss_every=25, log_every=500),
    "tiny": dict(vae_batch=4, vae_seconds=60, vae_steps=3, vae_lr=1e-3, vae_warmup=2, bank=64, batch=4,
                 unet_until=1e9, unet_steps=3, lr=1e-3, warmup=2, sweep_until=1e9,
                 sweep=[("dpmpp_2m", 4, 4.0), ("euler_a", 4, 4.0)], grid="test", loss_every=1, log_every=1),
}
EMA_MAX_DECAY = 0.998
SWEEP_TOLERANCE = 0.016  # three images of the 189-prompt grid
SYNC_EVERY = 50  # steps between host synchronisations (wall-clock checks), so the host never runs far ahead


def log(*parts):
    print(f"[{time.strftime('%H:%M:%S')}]", *parts, flush=True)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


class PhasePlan:
    """The step count of a training phase: fixed, or set from the measured speed of its first replayed steps so
    that the phase ends at a wall-clock deadline (time.time() value). A phase still running 3% of its length past
    the deadline stops and the record says so."""

    CALIBRATE_FROM, CALIBRATE_TO = 10, 40  # steps after the first replayed one

    def __init__(self, name, device, fixed_steps=None, deadline=None):
        self.name, self.device, self.fixed, self.deadline = name, device, fixed_steps, deadline
        self.total = fixed_steps if fixed_steps is not None else 10 ** 9
        self.capped, self.first, self.t_cal, self.rate, self.start = False, 0, None, None, time.time()

    def begin(self, done):
        self.first, self.start = done, time.time()

    def more(self, done) -> bool:
        return done < self.total

    def after(self, done):
        if self.fixed is None and done == self.first + self.CALIBRATE_FROM:
            sync(self.device)
            self.t_cal = time.time()
        if self.fixed is None and done == self.first + self.CALIBRATE_TO:
            sync(self.device)
            self.rate = (self.CALIBRATE_TO - self.CALIBRATE_FROM) / (time.time() - self.t_cal)
            self.total = done + max(0, int(self.rate * (self.deadline - time.time())))
            log(f"{self.name}: {self.rate:.1f} steps/s -> {self.total} steps, ending in "
                f"{self.deadline - time.time():.0f} s")
        if done % SYNC_EVERY == 0 and self.deadline is not None:
            sync(self.device)
            slack = 0.03 * (self.deadline - self.start) + 2
            if time.time() > self.deadline + slack and done < self.total:
                log(f"{self.name}: past its deadline at step {done} of {self.total}, stopping")
                self.capped, self.total = True, done


def lr_at(step, total, peak, warmup):
    """Linear warm-up, then cosine decay to a tenth of the peak."""
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def load_tokenizer():
    from transformers import CLIPTokenizer
    vocab = REPO / "models/vocab/clip"  # vocab.json + merges.txt
    tok = CLIPTokenizer.from_pretrained(str(vocab), model_max_length=77)
    ids = tok("a photo of a cat").input_ids
    if list(ids) != [49406, 320, 1125, 539, 320, 2368, 49407]:
        raise RuntimeError(f"CLIP tokenizer from {vocab} gives {ids} for 'a photo of a cat'")
    return tok


def caption_table(tokenizer, device):
    """Token ids [n_captions, 77] of every caption (scenes.all_captions order) and the set of ids they use."""
    captions = scenes.all_captions()
    unique = sorted(set(captions))
    ids = tokenizer(unique, padding="max_length", max_length=77, truncation=True, return_tensors="pt").input_ids
    row = {text: i for i, text in enumerate(unique)}
    table = ids[torch.tensor([row[c] for c in captions])]
    used = sorted(set(ids.flatten().tolist()))
    longest = int((ids != tokenizer.pad_token_id).sum(1).max()) + 1
    log(f"captions: {len(captions)} indexed, {len(unique)} distinct, {len(used)} token ids, longest {longest} tokens")
    return table.to(device), used


def check_analysis_on_renders(device):
    """The analysis must read every exact render of both grids correctly, or its verdicts on generated images
    mean nothing."""
    for name, cases in (("eval", scenes.eval_grid()), ("test", scenes.test_grid())):
        images = scenes.render(scenes.scenes_for_cases(cases, device))
        images = ((images.permute(0, 2, 3, 1).float().cpu().numpy() + 1) * 127.5).round().clip(0, 255)
        summary, rows = pipeline_eval.evaluate(images.astype(np.uint8), cases)
        bad = [r for r in rows if not (r["ok"] and r["ok_size"])]
        log(f"analysis on exact renders ({name} grid): {summary}")
        if bad:
            raise RuntimeError(f"analysis misreads exact renders: {bad[:5]}")


class LossLog:
    def __init__(self):
        self.rows = []  # (phase, step, loss)

    def load(self, path: Path):
        with open(path) as f:
            self.rows = [(r["phase"], int(r["step"]), float(r["loss"])) for r in csv.DictReader(f)]

    def add(self, phase, step, loss):
        self.rows.append((phase, step, loss))

    def write(self, docs: Path):
        with open(docs / "loss.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["phase", "step", "loss"])
            w.writerows((p, s, f"{l:.6f}") for p, s, l in self.rows)
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            log("matplotlib missing: loss curve as CSV only")
            return
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
        for ax, phase, title in ((axes[0], "vae", "VAE: L1 + L2 reconstruction (of the trained loss)"),
                                 (axes[1], "unet", "UNet + text encoder: min-SNR-5 weighted eps MSE")):
            pts = [(s, l) for p, s, l in self.rows if p == phase]
            if pts:
                ax.plot([s for s, _ in pts], [l for _, l in pts], lw=1)
            ax.set_yscale("log")
            ax.set_xlabel("step")
            ax.set_title(title, fontsize=9)
            ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(docs / "loss.png", dpi=110)
        plt.close(fig)


def run_phase(name, step, refill, plan, cfg, losses, loss_sum, step_offset=0):
    """The training loop shared by both phases: refill(done) refills the static batch buffers and sets the
    learning rate for step number `done`; step() trains one step (graph replay or eager). Loss rows are
    averages over cfg["loss_every"] steps, read back only at the end (no host synchronisation per step)."""
    refill(0)
    done = step.capture()  # warm-up steps train on the first batch
    loss_sum.zero_()
    plan.begin(done)
    snapshots = []
    while plan.more(done):
        refill(done)
        step()
        done += 1
        if done % cfg["loss_every"] == 0:
            snapshots.append((done, loss_sum.clone()))
            loss_sum.zero_()
        if done % cfg["log_every"] == 0 and snapshots:
            sync(plan.device)
            elapsed = time.time() - plan.start
            log(f"{name} step {done}/{plan.total}: loss {float(snapshots[-1][1]) / cfg['loss_every']:.5f} "
                f"({elapsed:.0f} s, {(done - plan.first) / max(elapsed, 1e-9):.1f} steps/s)")
        plan.after(done)
    sync(plan.device)
    values = torch.stack([v for _, v in snapshots]).tolist() if snapshots else []
    for (at, _), value in zip(snapshots, values):
        losses.add(name, step_offset + at, value / cfg["loss_every"])
    if values and not all(math.isfinite(v) for v in values):
        raise RuntimeError(f"{name}: the loss became non-finite")
    return done, time.time() - plan.start


def autocast_for(device):
    # No weight-cast cache: a captured graph must recompute the casts on every replay.
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda", cache_enabled=False)


def image_gradient_l1(a, b):
    """Mean absolute difference of horizontal and vertical pixel differences: penalises soft edges and rounded
    corners, which decide the fill ratio the semantic test reads shapes by."""
    dx = (a[..., :, 1:] - a[..., :, :-1]) - (b[..., :, 1:] - b[..., :, :-1])
    dy = (a[..., 1:, :] - a[..., :-1, :]) - (b[..., 1:, :] - b[..., :-1, :])
    return dx.abs().mean() + dy.abs().mean()


def train_vae(cfg, gen, device, losses, record, init=None):
    if init:
        from diffusers import AutoencoderKL
        vae = AutoencoderKL.from_pretrained(init, torch_dtype=torch.float32).to(device)
        record["vae_init"] = str(init)
        log(f"vae: continuing {init}")
    else:
        vae = architecture.make_vae().to(device)
    vae.train()
    params = list(vae.parameters())
    opt, lr = graphed_step.make_optimizer(params, device)
    kl_weight, edge_weight = 1e-5, 0.5
    x = torch.zeros((cfg["vae_batch"], 3, scenes.IMAGE_SIZE, scenes.IMAGE_SIZE), device=device)
    latent = scenes.IMAGE_SIZE // 4
    eps = torch.zeros((cfg["vae_batch"], 4, latent, latent), device=device)
    loss_sum = torch.zeros((), device=device)
    autocast = autocast_for(device)

    def step_fn():
        with autocast:
            posterior = vae.encode(x).latent_dist
            mean, logvar = posterior.mean.float(), posterior.logvar.float()
            recon = vae.decode(mean + torch.exp(0.5 * logvar) * eps).sample.float()
        rec = (recon - x).abs().mean() + ((recon - x) ** 2).mean()
        kl = 0.5 * (mean ** 2 + logvar.exp() - 1 - logvar).mean()
        loss = rec + edge_weight * image_gradient_l1(recon, x) + kl_weight * kl
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0, foreach=device.type == "cuda")
        opt.step()
        loss_sum.add_(rec.detach())
        return rec.detach()

    plan = PhasePlan("vae", device, cfg.get("vae_steps"), time.time() + cfg["vae_seconds"])

    def refill(done):
        lr.set(lr_at(done, plan.total, cfg["vae_lr"], cfg["vae_warmup"]))
        x.copy_(scenes.render(scenes.sample_scenes(cfg["vae_batch"], gen, device)))
        eps.normal_(generator=gen)

    step = graphed_step.GraphedStep("vae", step_fn, opt, device, log)
    steps, seconds = run_phase("vae", step, refill, plan, cfg, losses, loss_sum)
    record.update(vae_steps=steps, vae_seconds=round(seconds, 1), vae_capped=plan.capped,
                  vae_step_mode=step.mode, vae_capture_error=step.capture_error,
                  vae_steps_per_second=plan.rate)
    del step
    vae.eval().requires_grad_(False)
    return vae


def vae_report(vae, gen, device, record):
    """Held-out PSNR, and the semantic analysis of the VAE's reconstructions of the exact evaluation renders:
    the ceiling of what any UNet can reach through this decoder."""
    with torch.no_grad():
        mse = []
        for _ in range(4):
            x = scenes.render(scenes.sample_scenes(512 if device.type == "cuda" else 8, gen, device))
            mse.append(((vae.decode(vae.encode(x).latent_dist.mean).sample - x) ** 2).mean().item())
        cases = scenes.eval_grid() if device.type == "cuda" else scenes.test_grid()  # a CPU takes minutes
        x = scenes.render(scenes.scenes_for_cases(cases, device))
        recon = vae.decode(vae.encode(x).latent_dist.mean).sample
    images = ((recon.permute(0, 2, 3, 1).float().cpu().numpy() + 1) * 127.5).round().clip(0, 255)
    summary, _ = pipeline_eval.evaluate(images.astype(np.uint8), cases)
    psnr = 10 * math.log10(4.0 / max(np.mean(mse), 1e-12))  # images span [-1, 1]
    log(f"vae: held-out reconstruction PSNR {psnr:.1f} dB (fp32); analysis of its reconstructions of the "
        f"{len(cases)} exact renders of the {'evaluation' if len(cases) > 21 else 'test'} grid: {summary}")
    record.update(vae_psnr_db=psnr, vae_reconstruction_eval=summary)


def build_bank(vae, cfg, gen, device, record, keep_scaling=False):
    """The latent bank; its posterior means' standard deviation sets the VAE scaling factor (kept as it is when
    continuing a model, whose UNet was trained with it)."""
    bank = LatentBank.build(vae, cfg["bank"], gen, device, chunk=4096 if device.type == "cuda" else 32, log=log)
    mean, std = float(bank.mean.mean()), float(bank.mean.std())
    if not keep_scaling:
        vae.register_to_config(scaling_factor=1.0 / std)
    scaling = vae.config.scaling_factor
    log(f"vae: latent mean {mean:.3f} std {std:.3f}; scaling_factor {scaling:.5f}")
    record.update(bank_scenes=bank.size, vae_latent_mean=mean, vae_latent_std=std, vae_scaling_factor=scaling)
    return bank


def train_unet(cfg, bank, scaling, token_table, subset, gen, device, losses, record, unet=None, text_encoder=None,
               step_offset=0, t0=None):
    """Trains (or, given unet and text_encoder, continues training) the UNet and text encoder from the latent
    bank. Loss rows are logged at step_offset + step, so a continued run extends the earlier curve."""
    unet = (unet or architecture.make_unet()).to(device).train()
    text_encoder = (text_encoder or architecture.make_text_encoder()).to(device).train()
    diff = text_forward.check_matches(text_encoder, subset, token_table[:64])
    log(f"text_forward matches CLIPTextModel to {diff:.2e}")
    local_table = subset.local(token_table)
    params = list(unet.parameters()) + list(text_encoder.parameters())
    opt, lr = graphed_step.make_optimizer(params, device, weight_decay=0.01)
    ema = [p.detach().clone() for p in params]
    ema_weight = torch.zeros((), device=device)
    alphas_cumprod = architecture.make_train_scheduler().alphas_cumprod.to(device)
    n, shape = cfg["batch"], bank.mean.shape[1:]
    latents = torch.zeros((n, *shape), device=device)
    noise = torch.zeros((n, *shape), device=device)
    timesteps = torch.zeros((n,), dtype=torch.long, device=device)
    captions = torch.zeros((n,), dtype=torch.long, device=device)
    loss_sum = torch.zeros((), device=device)
    autocast = autocast_for(device)

    def step_fn():
        ac = alphas_cumprod[timesteps].view(-1, 1, 1, 1)
        noisy = ac.sqrt() * latents + (1 - ac).sqrt() * noise
        with autocast:
            context = text_forward.last_hidden_state(text_encoder, subset.embed(text_encoder, local_table[captions]))
            pred = unet(noisy, timesteps, context).sample.float()
        snr = (ac / (1 - ac)).view(-1)
        weight = snr.clamp(max=5.0) / snr  # min-SNR-5 for epsilon prediction
        loss = (weight * ((pred - noise) ** 2).mean(dim=(1, 2, 3))).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0, foreach=device.type == "cuda")
        opt.step()
        with torch.no_grad():
            delta = torch._foreach_sub([p.detach() for p in params], ema)
            torch._foreach_mul_(delta, ema_weight)
            torch._foreach_add_(ema, delta)
        loss_sum.add_(loss.detach())
        return loss.detach()

    plan = PhasePlan("unet", device, cfg.get("unet_steps"), (t0 or time.time()) + cfg["unet_until"])

    def refill(done):
        lr.set(lr_at(done, plan.total, cfg["lr"], cfg["warmup"]))
        ema_weight.fill_(1 - min(EMA_MAX_DECAY, (1 + done) / (10 + done)))
        bank.sample_into(latents, captions, gen, scaling)
        noise.normal_(generator=gen)
        timesteps.random_(0, alphas_cumprod.numel(), generator=gen)

    step = graphed_step.GraphedStep("unet", step_fn, opt, device, log)
    steps, seconds = run_phase("unet", step, refill, plan, cfg, losses, loss_sum, step_offset)
    record.update(unet_steps=steps, unet_seconds=round(seconds, 1), unet_capped=plan.capped,
                  unet_step_mode=step.mode, unet_capture_error=step.capture_error,
                  unet_steps_per_second=plan.rate, samples_seen=steps * n)
    del step
    with torch.no_grad():
        for p, e in zip(params, ema):
            p.copy_(e)
    return unet.eval(), text_encoder.eval()


def load_for_resume(folder: Path, docs: Path, losses, record, device):
    """The saved model (fp16 weights, upcast to fp32) and the earlier run's record and loss curve, to continue."""
    from diffusers import AutoencoderKL, UNet2DConditionModel
    from transformers import CLIPTextModel
    vae = AutoencoderKL.from_pretrained(str(folder / "vae"), torch_dtype=torch.float32).to(device)
    vae.eval().requires_grad_(False)
    unet = UNet2DConditionModel.from_pretrained(str(folder / "unet"), torch_dtype=torch.float32)
    text_encoder = CLIPTextModel.from_pretrained(str(folder / "text_encoder"), torch_dtype=torch.float32)
    with open(docs / "train_record.json") as f:
        previous = json.load(f)
    losses.load(docs / "loss.csv")
    record["previous_runs"] = previous.pop("previous_runs", []) + [previous]
    offset = sum(r.get("unet_steps", 0) for r in record["previous_runs"])
    for key in ("vae_steps", "vae_latent_mean", "vae_latent_std", "vae_scaling_factor", "vae_psnr_db"):
        record[key] = record["previous_runs"][0].get(key)
    log(f"resuming {folder} after {offset} UNet steps (VAE scaling factor {vae.config.scaling_factor:.5f})")
    return vae, unet, text_encoder, offset


def write_sd1_tokenizer(folder: Path):
    """transformers 5 saves a tokenizer as tokenizer.json alone; SD 1.x folders (and sdgen's loader) have
    vocab.json + merges.txt with transformers 4-style configs, so write exactly that: the shipped CLIP files."""
    from transformers import CLIPTokenizer
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name in ("vocab.json", "merges.txt"):
        shutil.copyfile(REPO / "models/vocab/clip" / name, folder / name)
    special = {"bos_token": "<|startoftext|>", "eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>",
               "unk_token": "<|endoftext|>"}
    config = {"add_prefix_space": False, "do_lower_case": True, "errors": "replace", "model_max_length": 77,
              "tokenizer_class": "CLIPTokenizer", **special}
    for name, content in (("special_tokens_map.json", special), ("tokenizer_config.json", config)):
        with open(folder / name, "w") as f:
            json.dump(content, f, indent=2, sort_keys=True)
    pipeline_eval.check_tokenizer(CLIPTokenizer.from_pretrained(str(folder)), folder)


def write_sd1_text_encoder_keys(folder: Path):
    """transformers 5 saves CLIPTextModel's tensors without the 'text_model.' prefix that every SD 1.x
    checkpoint has; rewrite them under the SD 1.x names (transformers loads both) and check the round trip."""
    from safetensors.torch import load_file, save_file
    from transformers import CLIPTextModel
    path = folder / "model.safetensors"
    tensors = load_file(str(path))
    plain = {k.removeprefix("text_model."): v for k, v in tensors.items()}
    save_file({"text_model." + k: v.contiguous() for k, v in plain.items()}, str(path), metadata={"format": "pt"})
    loaded = CLIPTextModel.from_pretrained(str(folder), torch_dtype=torch.float16).state_dict()
    missing = sorted(k for k in set(loaded) - set(plain) if not k.endswith("position_ids"))
    differing = sorted(k for k in plain if k not in loaded or not torch.equal(loaded[k].cpu(), plain[k]))
    if missing or differing:
        raise RuntimeError(f"text encoder round trip: missing {missing[:5]}, differing {differing[:5]}")


def save_model(vae, unet, text_encoder, tokenizer, used_tokens, model_dir: Path, record):
    from diffusers import StableDiffusionPipeline
    # Token rows training never saw keep their random initialisation, which would make any other word inject
    # noise into the prompt; zeroed, an unknown word contributes only its position embedding.
    with torch.no_grad():
        emb = text_encoder.get_input_embeddings().weight
        keep = torch.zeros(emb.shape[0], dtype=torch.bool, device=emb.device)
        keep[torch.tensor(used_tokens, device=emb.device)] = True
        emb[~keep] = 0
    pipe = StableDiffusionPipeline(vae=vae, text_encoder=text_encoder, tokenizer=tokenizer, unet=unet,
                                   scheduler=architecture.make_pipeline_scheduler(), safety_checker=None,
                                   feature_extractor=None, requires_safety_checker=False)
    pipe.to(torch.float16)
    if model_dir.exists():
        shutil.rmtree(model_dir)
    pipe.save_pretrained(str(model_dir), safe_serialization=True)
    for part in ("unet", "vae"):  # a continued run's from_pretrained leaves the source path in the configs
        path = model_dir / part / "config.json"
        config = json.loads(path.read_text())
        if config.pop("_name_or_path", None) is not None:
            path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    write_sd1_tokenizer(model_dir / "tokenizer")
    write_sd1_text_encoder_keys(model_dir / "text_encoder")
    sizes = {str(p.relative_to(model_dir)): p.stat().st_size for p in sorted(model_dir.rglob("*.safetensors"))}
    total = sum(sizes.values())
    counts = {"unet": sum(p.numel() for p in unet.parameters()),
              "text_encoder": sum(p.numel() for p in text_encoder.parameters()),
              "vae": sum(p.numel() for p in vae.parameters())}
    log(f"saved {model_dir}: weights {total / 1e6:.2f} MB {sizes}; parameters {counts}")
    log("folder: " + ", ".join(f"{p.relative_to(model_dir)} {p.stat().st_size}"
                               for p in sorted(model_dir.rglob("*")) if p.is_file()))
    if total > WEIGHT_LIMIT_BYTES:
        log(f"ERROR: weights {total} bytes exceed the {WEIGHT_LIMIT_BYTES}-byte limit")
    record.update(weight_bytes=sizes, weight_bytes_total=total, parameters=counts)


def sweep(pipe, cfg, record, docs: Path, deadline: float):
    """Evaluates cfg["sweep"]'s candidates in order (the first two always, the rest while time is left) and picks
    the default: the fewest steps whose strict accuracy is within SWEEP_TOLERANCE of the best (one image is
    0.53% of the grid; a CPU pays for every step), then the higher accuracy, then the lower guidance."""
    cases = scenes.eval_grid() if cfg["grid"] == "eval" else scenes.test_grid()
    prompts, seeds = [c.prompt for c in cases], [c.seed for c in cases]
    results, images_by = [], {}
    for n, (sampler, steps, guidance) in enumerate(cfg["sweep"]):
        if n >= 2 and time.time() > deadline:
            log(f"sweep: out of time, skipping {cfg['sweep'][n:]}")
            record["sweep_skipped"] = cfg["sweep"][n:]
            break
        t0 = time.time()
        images = pipeline_eval.generate(pipe, prompts, seeds, sampler, steps, guidance)
        gen_s = time.time() - t0
        summary, rows = pipeline_eval.evaluate(images, cases)
        log(f"sweep {sampler} {steps} steps cfg {guidance}: strict {summary['ok']:.3f} color {summary['ok_color']:.3f}"
            f" shape {summary['ok_shape']:.3f} position {summary['ok_position']:.3f} size {summary['ok_size']:.3f}"
            f" ({len(cases)} images in {gen_s:.1f} s)")
        results.append({"sampler": sampler, "steps": steps, "cfg": guidance, **summary, "rows": rows})
        images_by[(sampler, steps, guidance)] = images
    top = max(r["ok"] for r in results)
    best = min((r for r in results if r["ok"] >= top - SWEEP_TOLERANCE), key=lambda r: (r["steps"], -r["ok"], r["cfg"]))
    default = {"sampler": best["sampler"], "steps": best["steps"], "cfg": best["cfg"]}
    log(f"default settings: {default} (strict accuracy {best['ok']:.3f})")

    test_cases = scenes.test_grid()
    test_images = pipeline_eval.generate(pipe, [c.prompt for c in test_cases], [c.seed for c in test_cases],
                                         default["sampler"], default["steps"], default["cfg"])
    test_summary, test_rows = pipeline_eval.evaluate(test_images, test_cases)
    log(f"test grid (21 prompts) at the default settings: {test_summary}")

    # Time one image (batch 1, CFG) at the default settings, for reference (diffusers, fp32).
    timing = None
    if pipe.device.type == "cuda":
        for _ in range(2):
            torch.cuda.synchronize()
            t0 = time.time()
            pipeline_eval.generate(pipe, [prompts[0]], [seeds[0]], default["sampler"], default["steps"], default["cfg"])
            torch.cuda.synchronize()
            timing = time.time() - t0
        log(f"diffusers fp32 on the GPU, one image at the default settings: {timing * 1000:.0f} ms")

    evaluation = {"grid": cfg["grid"], "default": default, "diffusers_gpu_seconds_per_image": timing,
                  "sweep": [{k: v for k, v in r.items() if k != "rows"} for r in results],
                  "eval_grid_rows_at_default": best["rows"],
                  "test_grid": {"summary": test_summary, "rows": test_rows}}
    with open(docs / "semantic_eval.json", "w") as f:
        json.dump(evaluation, f, indent=1)
    record["evaluation"] = {k: evaluation[k] for k in ("grid", "default", "sweep")} | {"test_grid": test_summary}

    best_images = images_by[(best["sampler"], best["steps"], best["cfg"])]
    pick = list(range(0, len(best_images), max(1, len(best_images) // 64)))[:64]
    pipeline_eval.image_grid(best_images[pick], columns=8).save(docs / "samples.png")
    with open(docs / "samples.txt", "w") as f:
        f.write(f"# samples.png, row-major, {default}\n")
        for n, i in enumerate(pick):
            r = best["rows"][i]
            f.write(f"{n:2d} seed {r['seed']} '{r['prompt']}' -> {'ok' if r['ok'] else 'MISS'} "
                    f"({r['color']} {r['shape']} {r['position']})\n")
    return default


def write_sdgen_json(model_dir: Path, default, record):
    info = {
        "name": "sdgen-tiny",
        "about": "sdgen's built-in text-to-image model: simple shapes on plain backgrounds "
                 "(see models/builtin/MODEL_CARD.md)",
        "defaults": {"width": 64, "height": 64, "steps": default["steps"], "cfg_scale": default["cfg"],
                     "sampler": default["sampler"], "karras": False, "negative_prompt": ""},
        "prompt_template": "a {size} {color} {shape} {position} on a {background} background",
        "vocabulary": {
            "color": list(scenes.SHAPE_COLORS),
            "shape": list(scenes.SHAPES),
            "size": list(scenes.SIZES),
            "position": [phrase for _, phrase in scenes.POSITIONS],
            "background": list(scenes.BACKGROUND_COLORS),
        },
        "examples": [c.prompt for c in scenes.test_grid()[:4]],
        "vae_scaling_factor": record.get("vae_scaling_factor"),
    }
    with open(model_dir / "sdgen.json", "w") as f:
        json.dump(info, f, indent=1)


def fixture_cases(default):
    other = "euler_a" if default["sampler"] != "euler_a" else "dpmpp_2m"
    other_steps = 20 if other == "euler_a" else 16
    return [
        dict(prompt="a small red circle at the top left on a blue background", negative_prompt="", seed=42,
             sampler=default["sampler"], steps=default["steps"], cfg=default["cfg"]),
        dict(prompt="a large yellow triangle in the center on a black background", negative_prompt="", seed=7,
             sampler=other, steps=other_steps, cfg=default["cfg"]),
        dict(prompt="a large green square at the bottom right on a white background", negative_prompt="", seed=1234,
             sampler=default["sampler"], steps=default["steps"], cfg=7.0),
    ]


def training_data_grid(gen, device, docs: Path):
    batch = scenes.sample_scenes(32, gen, device)
    images = ((scenes.render(batch).permute(0, 2, 3, 1).cpu().numpy() + 1) * 127.5).round().clip(0, 255)
    pipeline_eval.image_grid(images.astype(np.uint8), columns=8).save(docs / "training_data.png")
    captions = scenes.all_captions()
    with open(docs / "training_data.txt", "w") as f:
        for i, ci in enumerate(batch.caption_indices().tolist()):
            f.write(f"{i:2d} '{captions[ci]}'\n")


def write_record(docs: Path, record):
    with open(docs / "train_record.json", "w") as f:
        json.dump(record, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=sorted(MODES), default="full")
    ap.add_argument("--seed", type=int, default=20251121)
    ap.add_argument("--output-root", default=str(REPO), help="where models/, docs/ and tests/ are written")
    ap.add_argument("--vae-init", help="a saved VAE folder to continue training instead of starting afresh")
    ap.add_argument("--resume", help="a saved model folder to continue training (with --mode resume)")
    ap.add_argument("--vae-steps", type=int, help="fix the VAE step count (else: fill --vae-seconds)")
    ap.add_argument("--unet-steps", type=int, help="fix the UNet step count (else: train until --unet-until)")
    ap.add_argument("--vae-seconds", type=float, help="VAE phase budget, seconds")
    ap.add_argument("--unet-until", type=float, help="UNet phase deadline, seconds after TRAIN_T0")
    ap.add_argument("--sweep-until", type=float, help="no new sweep candidate after this, seconds after TRAIN_T0")
    ap.add_argument("--bank", type=int, help="scenes in the latent bank")
    ap.add_argument("--batch", type=int, help="UNet batch size")
    args = ap.parse_args()
    cfg = dict(MODES[args.mode])
    for key in ("vae_steps", "unet_steps", "vae_seconds", "unet_until", "sweep_until", "bank", "batch"):
        if getattr(args, key) is not None:
            cfg[key] = getattr(args, key)
    if args.mode == "resume" and not args.resume:
        ap.error("--mode resume needs --resume FOLDER")
    root = Path(args.output_root)
    model_dir, docs = root / MODEL_REL, root / DOCS_REL
    fixture_stem = root / FIXTURE_REL
    docs.mkdir(parents=True, exist_ok=True)
    fixture_stem.parent.mkdir(parents=True, exist_ok=True)

    import diffusers
    import transformers
    t0 = float(os.environ.get("TRAIN_T0") or time.time())
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    gen = torch.Generator(device=device).manual_seed(args.seed)
    record = {"mode": args.mode, "seed": args.seed, "config": {k: v for k, v in cfg.items() if k != "sweep"},
              "argv": sys.argv[1:],
              "device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu",
              "versions": {"torch": torch.__version__, "diffusers": diffusers.__version__,
                           "transformers": transformers.__version__}}
    log(f"mode {args.mode}, device {record['device']}, {record['versions']}, {time.time() - t0:.0f} s after T0")

    tokenizer = load_tokenizer()
    token_table, used_tokens = caption_table(tokenizer, device)
    check_analysis_on_renders(device)
    training_data_grid(torch.Generator(device=device).manual_seed(args.seed + 1), device, docs)

    losses = LossLog()
    try:
        unet = text_encoder = None
        offset = 0
        if args.resume:
            vae, unet, text_encoder, offset = load_for_resume(Path(args.resume), docs, losses, record, device)
        else:
            vae = train_vae(cfg, gen, device, losses, record, init=args.vae_init)
        log(f"vae phase done at {time.time() - t0:.0f} s")
        vae_report(vae, gen, device, record)
        bank = build_bank(vae, cfg, gen, device, record, keep_scaling=bool(args.resume))
        subset = text_forward.TokenSubset(used_tokens, device)
        unet, text_encoder = train_unet(cfg, bank, vae.config.scaling_factor, token_table, subset, gen, device,
                                        losses, record, unet, text_encoder, offset, t0)
        del bank
    finally:
        losses.write(docs)
    if device.type == "cuda":
        torch.cuda.empty_cache()
    log(f"training done at {time.time() - t0:.0f} s")

    save_model(vae, unet, text_encoder, tokenizer, used_tokens, model_dir, record)
    provisional = dict(zip(("sampler", "steps", "cfg"), cfg["sweep"][0]))
    write_sdgen_json(model_dir, provisional, record)  # replaced below once the sweep has picked the default
    write_record(docs, record)
    del vae, unet, text_encoder
    pipe = pipeline_eval.load_pipeline(model_dir, device)
    default = sweep(pipe, cfg, record, docs, t0 + cfg["sweep_until"])
    del pipe
    write_sdgen_json(model_dir, default, record)
    write_record(docs, record)
    semantic_grid.write(root, log=log)  # the engine's semantic test grid, from semantic_eval.json
    log(f"evaluation done at {time.time() - t0:.0f} s")

    torch.set_num_threads(min(16, os.cpu_count() or 1))
    t1 = time.time()
    reference_fixture.write_fixture(model_dir, str(fixture_stem), fixture_cases(default), MODEL_REL, log=log)
    record["fixture_cpu_seconds"] = round(time.time() - t1, 1)
    record["total_seconds"] = round(time.time() - t0, 1)
    write_record(docs, record)
    log(f"all done at {record['total_seconds']} s after T0")


if __name__ == "__main__":
    main()
