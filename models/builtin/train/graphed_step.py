"""One training step (forward, backward, gradient clipping, optimizer step, EMA) replayed as a single CUDA graph.

The tiny networks here are bound by the host, not the GPU: run eagerly, diffusers' modules cost ~3,000 kernel
launches and ~140 ms of Python a step whatever the batch. Captured once, a step is one graph launch. The step
function must read its inputs from static buffers that the caller refills before each call (in place), keep every
changing scalar (learning rate, EMA weight) in device tensors, and return its loss as a tensor; the optimizer must
be built with capturable=True and a device-tensor learning rate.

If capture fails (an operation that synchronises with the host, say), the step runs eagerly instead and the log
says why, so a training run on the GPU machine degrades rather than dies.
"""
from __future__ import annotations

import time

import torch


class GraphedStep:
    def __init__(self, name, step_fn, optimizer, device, log, warmup_steps=3):
        self.name, self.step_fn, self.optimizer, self.device, self.log = name, step_fn, optimizer, device, log
        self.warmup_steps = warmup_steps
        self.graph, self.static_loss = None, None
        self.mode = "eager"
        self.capture_error = None

    def capture(self) -> int:
        """Warm-up steps on a side stream (lazy initialisation, cuDNN autotuning, optimizer state), then the
        capture. Returns the number of real optimizer steps taken (the warm-up steps train on the current
        buffers)."""
        if self.device.type != "cuda":
            return 0
        t0 = time.time()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(self.warmup_steps):
                self.optimizer.zero_grad(set_to_none=True)
                self.step_fn()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        try:
            graph = torch.cuda.CUDAGraph()
            self.optimizer.zero_grad(set_to_none=True)
            with torch.cuda.graph(graph):
                self.static_loss = self.step_fn()
            torch.cuda.synchronize()
            self.graph, self.mode = graph, "cuda_graph"
            self.log(f"{self.name}: step captured as a CUDA graph ({time.time() - t0:.1f} s with "
                     f"{self.warmup_steps} warm-up steps)")
        except Exception as error:  # noqa: BLE001 - any capture failure falls back to eager steps
            self.capture_error = f"{type(error).__name__}: {error}"
            self.log(f"{self.name}: CUDA graph capture failed, running eagerly: {self.capture_error}")
            self.graph, self.static_loss = None, None
            try:
                torch.cuda.synchronize()
            except Exception as sticky:  # noqa: BLE001 - reported; the eager steps will show whether it matters
                self.log(f"{self.name}: synchronize after the failed capture: {sticky}")
        return self.warmup_steps

    def __call__(self) -> torch.Tensor:
        if self.graph is not None:
            self.graph.replay()
            return self.static_loss
        self.optimizer.zero_grad(set_to_none=True)
        return self.step_fn()


def make_optimizer(params, device, betas=(0.9, 0.99), weight_decay=0.0):
    """AdamW whose learning rate lives in a device tensor (set it with lr.fill_ before each step): fused and
    capturable on CUDA, plain elsewhere."""
    lr = torch.zeros((), device=device) if device.type == "cuda" else 0.0
    if device.type == "cuda":
        opt = torch.optim.AdamW(params, lr=lr, betas=betas, weight_decay=weight_decay, fused=True, capturable=True)
    else:
        opt = torch.optim.AdamW(params, lr=1e-3, betas=betas, weight_decay=weight_decay)
    return opt, LearningRate(opt, lr)


class LearningRate:
    def __init__(self, optimizer, tensor):
        self.optimizer, self.tensor = optimizer, tensor

    def set(self, value: float) -> None:
        if isinstance(self.tensor, torch.Tensor):
            self.tensor.fill_(value)  # a kernel launch, no host synchronisation
        else:
            for group in self.optimizer.param_groups:
                group["lr"] = value
