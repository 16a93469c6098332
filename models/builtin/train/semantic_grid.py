#!/usr/bin/env python3
"""Writes the engine's semantic test grid, tests/data/fixtures/builtin_semantic_grid.json, from the evaluation that
train.py records in docs/builtin/semantic_eval.json (no torch needed):

  python3 models/builtin/train/semantic_grid.py

The grid: 63 of the 189 evaluation prompts, every color x shape with three positions p = (color + shape + 3k) mod 9,
k = 0, 1, 2 (so each of the nine cells appears seven times, across rows and columns alike), chosen by that rule
before looking at any result. Each case keeps its prompt, seed and expected attributes, and diffusers' analysis of
its image at the model's default settings, so the C++ test (tests/builtin/) can report both side by side.
"""
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
COLORS = ("red", "orange", "yellow", "green", "blue", "purple", "pink")  # scenes.SHAPE_COLORS order
SHAPES = ("circle", "square", "triangle")                                 # scenes.SHAPES
SIZES = ("small", "large")                                                # scenes.SIZES
POSITIONS = ("top left", "top", "top right", "left", "center", "right", "bottom left", "bottom", "bottom right")


def write(root: Path = REPO, log=print):
    evaluation = json.loads((root / "docs/builtin/semantic_eval.json").read_text())
    rows = evaluation["eval_grid_rows_at_default"]
    cases = []
    for ci, color in enumerate(COLORS):
        for si, shape in enumerate(SHAPES):
            for k in range(3):
                p = (ci + si + 3 * k) % 9
                index = ci * 27 + si * 9 + p  # scenes.eval_grid's order: color, shape, position
                row = rows[index]
                size = SIZES[(ci + si + p) % 2]
                assert row["index"] == index and f"{size} {color} {shape}" in row["prompt"], row
                cases.append({"index": index, "prompt": row["prompt"], "seed": row["seed"], "color": color,
                              "shape": shape, "position": p, "size": size,
                              "diffusers": {k2: row[k2] for k2 in ("ok", "color", "shape", "position", "fill", "size")}})
    ok = sum(c["diffusers"]["ok"] for c in cases) / len(cases)
    out = {"about": "the engine's semantic test grid of the built-in model (models/builtin/train/semantic_grid.py)",
           "settings": evaluation["default"], "required_fraction": 0.8, "diffusers_ok_fraction": ok,
           "positions": POSITIONS, "cases": cases}
    path = root / "tests/data/fixtures/builtin_semantic_grid.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1) + "\n")
    log(f"wrote {path}: {len(cases)} cases, diffusers all-correct {ok:.3f}")


if __name__ == "__main__":
    write()
