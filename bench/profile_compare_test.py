#!/usr/bin/env python3
"""Checks bench/profile_compare.py on small hand-made --profile-conv reports (run by ctest: bench_profile_compare)."""
import io
import json
import os
import sys
import tempfile
from contextlib import redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile_compare as pc  # noqa: E402


def report(total, norm_ms, conv_in_ms, fused):
    """A UNet graph whose resnet norm is a statistics launch + the conv's staging, or one fused launch."""
    others = [{"node": 1, "type": "linear", "label": "down 0 attention 0 block 0 ff geglu", "ms": 0.09}]
    kernels = [{"label": "coop", "role": "gemm", "ms": 0.1, "flops": 1, "bytes": 1}]
    if fused:
        others.append({"node": 2, "type": "norm", "label": "down 1 resnet 0 norm1", "ms": norm_ms})
    else:
        others.append({"node": 2, "type": "norm", "label": "down 1 resnet 0 norm1 stats (8 parts)", "ms": norm_ms})
        kernels.insert(0, {"label": "stage", "role": "input transform", "ms": conv_in_ms, "flops": 0, "bytes": 1})
    return {"graphs": [{"name": "unet step", "total_ms": total, "launches": 3 if fused else 4,
                        "by_type": {"norm": {"ms": norm_ms, "launches": 1}, "other": {"ms": 0.0, "launches": 0}},
                        "convs": [{"layer": "down 1 resnet 0 conv1", "kernels": kernels}], "others": others},
                       {"name": "vae decode", "total_ms": 13.0, "launches": 9, "by_type": {}, "convs": [],
                        "others": []}]}


def run(*argv):
    out = io.StringIO()
    with redirect_stdout(out):
        pc.main(list(argv))
    return out.getvalue()


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def main():
    expect(pc.kind_of("up 2 resnet 1 norm1 stats (8 parts)") == "resnet norm1 stats", "parts and indices")
    expect(pc.kind_of("down 0 attention 1 block 0 ff geglu") == "attention block ff geglu", "block kind")
    expect(pc.kind_of("mid attention block 0 attn1 qkv") == "attention block attn1 qkv", "mid kind")
    expect(pc.kind_of("conv_out gemm") == "conv_out gemm", "plain label")
    expect(pc.best_of_rounds([{"a": 2.0, "b": 1.0}, {"a": 1.5}]) == {"a": 1.5, "b": 1.0}, "best of rounds")
    expect(pc.aggregate({"down 0 resnet 0 norm1": 1.0, "up 1 resnet 2 norm1": 0.5}) == {"resnet norm1": (1.5, 2)},
           "aggregate")
    with tempfile.TemporaryDirectory() as d:
        paths = {}
        for name, r in {"a1": report(14.3, 0.010, 0.009, False), "a2": report(14.2, 0.011, 0.008, False),
                        "b1": report(14.0, 0.012, 0.0, True), "b2": report(14.1, 0.011, 0.0, True)}.items():
            paths[name] = os.path.join(d, name + ".json")
            with open(paths[name], "w") as f:
                json.dump(r, f)
        text = run(f"stats={paths['a1']},{paths['a2']}", f"fused={paths['b1']},{paths['b2']}")
        lines = text.splitlines()
        # Totals: the best round first, then every round in order; the VAE graph's totals too.
        expect(any(line.split()[:3] == ["stats", "14.200", "ms,"] and "rounds 14.300 / 14.200" in line
                   for line in lines), text)
        expect(any(line.split()[:2] == ["fused", "14.000"] for line in lines), text)
        expect("== vae decode: totals (best round; every round)" in lines, text)
        # Launches: best of the rounds, "-" where a variant has no such launch, the largest difference first.
        table = lines[lines.index("== unet step: launches (best round), ms, by the largest difference from stats") + 2:]
        expect(table[0].split() == ["down", "1", "resnet", "0", "norm1", "-", "0.0110"], table[0])
        rows = {line[:46].strip(): line[46:].split() for line in table if line.startswith("  ")}
        expect(rows["down 1 resnet 0 norm1 stats (8 parts)"] == ["0.0100", "-"], rows)
        expect(rows["down 1 resnet 0 norm1"] == ["-", "0.0110"], rows)
        expect(rows["down 1 resnet 0 conv1 input transform"] == ["0.0080", "-"], rows)
        expect(rows["down 0 attention 0 block 0 ff geglu"] == ["0.0900", "0.0900"], rows)
        order = list(rows)
        expect(order.index("down 1 resnet 0 norm1") < order.index("down 0 attention 0 block 0 ff geglu"), order)
        # Aggregated: kinds summed with their counts.
        agg = run("--aggregate", f"stats={paths['a1']}", f"fused={paths['b1']}")
        expect(any("resnet norm1 stats" in line and "0.0100 ( 1)" in line for line in agg.splitlines()), agg)
        # Hostile input: a clear error naming the argument or the file.
        for argv, needle in [(["nonsense"], "is not NAME=REPORT.json"), (["x="], "needs a name and at least one"),
                             ([f"x={d}/missing.json"], "missing.json: not a --profile-conv --json report")]:
            try:
                run(*argv)
                raise AssertionError(f"no error for {argv}")
            except SystemExit as e:
                expect(needle in str(e), f"{argv}: {e}")
        bad = os.path.join(d, "bad.json")
        with open(bad, "w") as f:
            f.write('{"graphs": 3}')
        try:
            run(f"x={bad}")
            raise AssertionError("no error for a report without a graph list")
        except SystemExit as e:
            expect("bad.json: not a --profile-conv --json report" in str(e), str(e))
    print("profile_compare: ok")


if __name__ == "__main__":
    main()
