#!/usr/bin/env python3
"""Compares `sdgen --profile-conv --json` reports of several variants, launch by launch.

  python3 bench/profile_compare.py [--graph unet] [--top 40] [--aggregate] \\
      NAME=REPORT.json[,REPORT.json...] NAME=REPORT.json[,...] ...

An A/B measurement on the GPU machine runs each variant's profile in alternating rounds (the session scripts in
scripts/device/sessions/ do: one JSON per variant and round). This prints, for every variant, the graphs' totals
by op type (the best round, and every round's total), then, for the graph(s) matching --graph, each launch's time
(the best of its rounds) beside the first variant's, sorted by the largest difference. A launch is a profile
"others" entry (its label) or a kernel of a conv layer ("LAYER ROLE"). --aggregate sums the launches of the same
kind over the network (the level, "down 2", "up 1" or "mid", the indices of "resnet 0", "attention 1", "block 0"
and a split's "(8 parts)" dropped) and prints the count beside the sum. Launches missing from a variant print as "-"
(a fused launch in one variant is a different label from the unfused ones in another).
"""
import argparse
import json
import re
import sys

_LEVEL = re.compile(r"\b(down \d+|up \d+|mid)\b ?")
_INDEX = re.compile(r"\b(resnet|attention|block) \d+\b")
_PARTS = re.compile(r" ?\(\d+ parts[^)]*\)")


def launches(graph):
    """{label: ms} of one graph of a report: its other launches and its convs' kernels."""
    out = {}
    for o in graph.get("others", []):
        out[o["label"]] = out.get(o["label"], 0.0) + float(o["ms"])
    for c in graph.get("convs", []):
        for k in c.get("kernels", []):
            label = f"{c['layer']} {k['role']}"
            out[label] = out.get(label, 0.0) + float(k["ms"])
    return out


def kind_of(label):
    """The launch's kind: its label without the location in the network."""
    return " ".join(_PARTS.sub("", _INDEX.sub(r"\1", _LEVEL.sub("", label))).split())


def aggregate(per_label):
    """{kind: (ms summed, launches)} of a {label: ms}."""
    out = {}
    for label, ms in per_label.items():
        total, count = out.get(kind_of(label), (0.0, 0))
        out[kind_of(label)] = (total + ms, count + 1)
    return out


def best_of_rounds(rounds):
    """The smallest time of every key over the rounds ({key: ms} each; a key absent from a round is skipped)."""
    best = {}
    for r in rounds:
        for k, v in r.items():
            best[k] = min(best.get(k, v), v)
    return best


def parse_variant(arg):
    if "=" not in arg:
        raise SystemExit(f"profile_compare: '{arg}' is not NAME=REPORT.json[,REPORT.json...]")
    name, files = arg.split("=", 1)
    paths = [p for p in files.split(",") if p]
    if not name or not paths:
        raise SystemExit(f"profile_compare: '{arg}' needs a name and at least one report")
    return name, paths


def load(path):
    try:
        with open(path) as f:
            report = json.load(f)
        graphs = report["graphs"]
        if not isinstance(graphs, list):
            raise TypeError("'graphs' is not a list")
        return graphs
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"profile_compare: {path}: not a --profile-conv --json report ({e})")


def compare(variants, graph_filter="unet", top=40, aggregated=False):
    """The comparison as lines of text; `variants` is [(name, [graphs of each round])]."""
    lines = []
    names = [n for n, _ in variants]
    graph_names = []
    for _, rounds in variants:
        for graphs in rounds:
            for g in graphs:
                if g["name"] not in graph_names:
                    graph_names.append(g["name"])
    for gname in graph_names:
        lines.append(f"== {gname}: totals (best round; every round)")
        for name, rounds in variants:
            gs = [g for graphs in rounds for g in graphs if g["name"] == gname]
            if not gs:
                lines.append(f"  {name:12} -")
                continue
            best = min(gs, key=lambda g: g["total_ms"])
            types = " ".join(f"{t} {v['ms']:.3f}" for t, v in best.get("by_type", {}).items() if v["ms"] > 0)
            every = " / ".join(f"{g['total_ms']:.3f}" for g in gs)
            lines.append(f"  {name:12} {best['total_ms']:8.3f} ms, {best.get('launches', 0)} launches ({types}); "
                         f"rounds {every}")
        if graph_filter not in gname:
            continue
        per_variant = []
        for _, rounds in variants:
            per_round = [launches(g) for graphs in rounds for g in graphs if g["name"] == gname]
            best = best_of_rounds(per_round)
            if aggregated:
                best = aggregate(best)
            per_variant.append(best)
        keys = []
        for v in per_variant:
            keys += [k for k in v if k not in keys]

        def ms(v, k):
            x = v.get(k)
            return None if x is None else (x[0] if aggregated else x)

        def delta(k):
            base = ms(per_variant[0], k) or 0.0
            return max((abs((ms(v, k) or 0.0) - base) for v in per_variant[1:]), default=0.0)

        keys.sort(key=delta, reverse=True)
        what = "launch kinds (summed; count)" if aggregated else "launches (best round)"
        lines.append(f"== {gname}: {what}, ms, by the largest difference from {names[0]}")
        lines.append(f"  {'':44} " + " ".join(f"{n:>12}" for n in names))
        for k in keys[:top]:
            cells = []
            for v in per_variant:
                x = ms(v, k)
                if x is None:
                    cells.append(f"{'-':>12}")
                elif aggregated:
                    cells.append(f"{x:8.4f} ({v[k][1]:2d})")
                else:
                    cells.append(f"{x:12.4f}")
            lines.append(f"  {k[:44]:44} " + " ".join(cells))
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("variants", nargs="+", help="NAME=REPORT.json[,REPORT.json...] (the first is the baseline)")
    ap.add_argument("--graph", default="unet", help="launch tables for graphs whose name contains this")
    ap.add_argument("--top", type=int, default=40, help="rows per launch table")
    ap.add_argument("--aggregate", action="store_true", help="sum launches of the same kind over the network")
    args = ap.parse_args(argv)
    variants = [(name, [load(p) for p in paths]) for name, paths in map(parse_variant, args.variants)]
    print("\n".join(compare(variants, args.graph, args.top, args.aggregate)))


if __name__ == "__main__":
    sys.exit(main())
