"""Merges `sdgen --bench-conv2d --json` output with the same run's PyTorch reference (bench/reference/torch_conv2d.py) into the
markdown table of docs/perf.md: per row and precision, each algorithm's median and the ratio ours/cuDNN."""
import json
import math
import sys


def main(ours_path, torch_path):
    ours = json.load(open(ours_path))["rows"]
    ref = {(r["layer"], r["precision"]): r for r in json.load(open(torch_path))["rows"]}
    algos = ["general", "gemm-v2", "winograd"]
    table = {}
    for r in ours:
        if r.get("error") or r.get("median_ms") is None:
            continue
        table.setdefault((r["layer"], r["shape"], r["precision"]), {})[r["algo"]] = r["median_ms"]
    print("| layer | [N,Cin,Cout,H,W,K,s] | prec | general ms | gemm-v2 ms | winograd ms | cuDNN ms (p10–p90) | best/cuDNN |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |")
    logs = {"fp32": [], "fp16": []}
    for (layer, shape, prec), times in table.items():
        t = ref[(layer, prec)]
        best = min(times.values())
        ratio = best / t["median"]
        logs[prec].append(math.log(ratio))
        cells = [f"{times[a]:.4f}" if a in times else "—" for a in algos]
        print(f"| {layer} | {shape} | {prec} | {' | '.join(cells)} | {t['median']:.4f} ({t['p10']:.4f}–{t['p90']:.4f}) "
              f"| {ratio:.2f} |")
    for prec, l in logs.items():
        if l:
            print(f"\nGeometric mean of best/cuDNN over {len(l)} rows, {prec}: {math.exp(sum(l) / len(l)):.2f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
