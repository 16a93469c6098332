"""cuBLAS (through torch.nn.functional.linear, fp16) on the linear shapes sdgen's linear_bench times, for the
same-call comparison of docs/perf.md. Plain products with bias where the layer has one (cuBLAS's own
epilogue); sdgen's rows also carry their fused prologue/epilogue. Median, p10, p90 of CUDA-event timings.
   python3 bench/reference/torch_linear.py bench/data/sd15_linear_shapes.json OUT.json [--rounds N]"""
import json
import sys

import torch
import torch.nn.functional as F

from cuda_timing import time_ms  # this script's folder is on sys.path


def main():
    shapes_path, out_path = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 50
    torch.manual_seed(0)
    rows = []
    for s in json.load(open(shapes_path))["gemm"]:
        m, k, n = s["M"], s["K"], s["N"]
        x = torch.randn(m, k, device="cuda", dtype=torch.float16)
        w = torch.randn(n, k, device="cuda", dtype=torch.float16) / k ** 0.5
        b = torch.randn(n, device="cuda", dtype=torch.float16) * 0.1 if s["bias"] else None
        t = time_ms(lambda: F.linear(x, w, b), 10, rounds)
        med, p10, p90 = t["median"], t["p10"], t["p90"]
        rows.append({"name": s["name"], "M": m, "K": k, "N": n, "torch_ms": med, "torch_p10_ms": p10,
                     "torch_p90_ms": p90, "torch_tflops": 2 * m * n * k / med / 1e9})
        print(f"{s['name']:<18} {m:6d} {k:6d} {n:6d}  torch {med:8.4f} ms ({p10:.4f}-{p90:.4f})  "
              f"{rows[-1]['torch_tflops']:6.1f} TFLOP/s", flush=True)
    json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows},
              open(out_path, "w"), indent=1)


if __name__ == "__main__":
    main()
