"""PyTorch's flash SDPA (fp16) on the attention shapes of bench/data/sd15_attention_shapes.json, for the
same-call comparison with sdgen's attention_bench (docs/perf.md). Median, p10, p90 of CUDA-event timings.
   python3 bench/reference/torch_sdpa.py bench/data/sd15_attention_shapes.json OUT.json [--rounds N]"""
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
    for s in json.load(open(shapes_path))["attention"]:
        bh, lq, lk, d = s["BH"], s["Lq"], s["Lk"], s["D"]
        q = torch.randn(1, bh, lq, d, device="cuda", dtype=torch.float16)
        k = torch.randn(1, bh, lk, d, device="cuda", dtype=torch.float16)
        v = torch.randn(1, bh, lk, d, device="cuda", dtype=torch.float16)
        t = time_ms(lambda: F.scaled_dot_product_attention(q, k, v), 10, rounds)
        med, p10, p90 = t["median"], t["p10"], t["p90"]
        flops = 4 * bh * lq * lk * d
        rows.append({"name": s["name"], "BH": bh, "Lq": lq, "Lk": lk, "D": d, "torch_ms": med, "torch_p10_ms": p10,
                     "torch_p90_ms": p90, "torch_tflops": flops / med / 1e9})
        print(f"{s['name']:<22} BH {bh:3d} Lq {lq:5d} Lk {lk:5d} D {d:3d}  torch {med:8.4f} ms "
              f"({p10:.4f}-{p90:.4f})  {rows[-1]['torch_tflops']:6.1f} TFLOP/s", flush=True)
    json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows},
              open(out_path, "w"), indent=1)


if __name__ == "__main__":
    main()
