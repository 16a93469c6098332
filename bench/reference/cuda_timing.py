"""CUDA-event timing shared by the PyTorch reference scripts of bench/reference (same-call comparisons)."""
import statistics

import torch


def time_ms(fn, warmup, reps):
    """Median, p10, p90 in ms of `reps` timed calls of fn after `warmup` untimed ones (CUDA events)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    q = lambda p: times[min(len(times) - 1, int(p * len(times)))]
    return {"median": statistics.median(times), "p10": q(0.1), "p90": q(0.9)}
