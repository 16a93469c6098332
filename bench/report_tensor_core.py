"""Merges one device call's outputs into docs/perf-data/h100-tensor-core.json (issue 16's results file):
sdgen's linear_bench and attention_bench rows for the engine's own choice ("auto"), cuBLAS/SDPA from the same
call, and the UNet step's linear and attention totals from `sdgen --profile-conv --json`.
   python3 bench/report_tensor_core.py DIR OUT.json      (DIR: linear.json, torch_linear.json, attention.json,
                                                           torch_sdpa.json, profile_conv_sd15_fp16.json)"""
import datetime
import json
import math
import os
import sys


def load(d, name):
    p = os.path.join(d, name)
    return json.load(open(p)) if os.path.exists(p) else None


def main():
    d, out_path = sys.argv[1], sys.argv[2]
    lin, tlin = load(d, "linear.json"), load(d, "torch_linear.json")
    att, tatt = load(d, "attention.json"), load(d, "torch_sdpa.json")
    prof = load(d, "profile_conv_sd15_fp16.json")
    out = {"device": (lin or att or {}).get("device"), "date": datetime.date.today().isoformat(), "gemm": [],
           "attention": []}
    torch_gemm = {r["name"]: r for r in (tlin or {}).get("rows", [])}
    for r in (lin or {}).get("rows", []):
        if r["variant"] != "auto":
            continue
        t = torch_gemm.get(r["name"], {})
        out["gemm"].append({"name": r["name"], "M": r["M"], "K": r["K"], "N": r["N"], "ms": r["ms"],
                            "p10_ms": r["p10_ms"], "p90_ms": r["p90_ms"], "tflops": r["tflops"],
                            "kernel": r["kernel"], "prologue": r["prologue"], "residual": r["residual"],
                            "per_step": r["per_step"], "torch_ms": t.get("torch_ms"),
                            "torch_p10_ms": t.get("torch_p10_ms"), "torch_p90_ms": t.get("torch_p90_ms")})
    torch_att = {r["name"]: r for r in (tatt or {}).get("rows", [])}
    for r in (att or {}).get("rows", []):
        if r.get("variant") != "auto":
            continue
        t = torch_att.get(r["name"], {})
        out["attention"].append({k: r.get(k) for k in ("name", "BH", "Lq", "Lk", "D", "ms", "p10_ms", "p90_ms",
                                                       "tflops", "kernel", "per_step")} |
                                {"torch_ms": t.get("torch_ms"), "torch_p10_ms": t.get("torch_p10_ms"),
                                 "torch_p90_ms": t.get("torch_p90_ms")})

    def geomean(rows, only=None):
        v = [math.log(r["ms"] / r["torch_ms"]) for r in rows if r.get("torch_ms") and (only is None or only(r))]
        return math.exp(sum(v) / len(v)) if v else None

    sd = lambda r: r.get("per_step", 0) > 0
    out["gemm_geomean_ratio_vs_cublas_sd15"] = geomean(out["gemm"], sd)
    out["attention_geomean_ratio_vs_sdpa_sd15"] = geomean(out["attention"], sd)
    out["gemm_step_sum_ms"] = sum(r["ms"] * r["per_step"] for r in out["gemm"])
    out["attention_step_sum_ms"] = sum(r["ms"] * r["per_step"] for r in out["attention"])
    if prof:
        unet = next(g for g in prof["graphs"] if "unet" in g.get("name", "unet").lower())
        out["step_linear_ms"] = unet["by_type"]["linear"]["ms"]
        out["step_attention_ms"] = unet["by_type"]["attention"]["ms"]
        out["step_total_ms"] = sum(v["ms"] for v in unet["by_type"].values())
        out["step_launches"] = unet.get("commands")
    json.dump(out, open(out_path, "w"), indent=1)
    for k, v in out.items():
        if not isinstance(v, list):
            print(k, v)


if __name__ == "__main__":
    main()
