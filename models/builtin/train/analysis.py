"""The simple image analysis that checks a generated image against its prompt (color, shape, position, size).

This is the exact procedure docs/builtin-model.md specifies for the engine's C++ semantic test; keep the two in
step. Input: one image as uint8 [H, W, 3] (RGB, top row first).

1. Background: the per-channel median of the outermost pixel ring (2W + 2H - 4 pixels; for an even count the
   mean of the two middle values).
2. Foreground: pixels whose Euclidean RGB distance to the background exceeds FOREGROUND_DISTANCE (0..255 units);
   of those, the largest 4-connected component (ties: the one found first in row-major order). Fewer than
   MIN_FOREGROUND_PIXELS pixels: no shape found.
3. Color: the per-channel median of the component's pixels; its HSV hue (degrees); the named shape color whose
   own hue is circularly nearest.
4. Position: the component's centroid (mean of pixel column / row indices + 0.5) -> the 3x3 cell
   (floor(3 * cx / W), floor(3 * cy / H)), row-major from the top left.
5. Shape: fill ratio = component pixel count / area of its bounding box (inclusive pixel extents);
   >= SQUARE_MIN_FILL: square; >= CIRCLE_MIN_FILL: circle; else triangle.
6. Size (reported, not part of the pass criterion): larger bounding-box side >= LARGE_MIN_EXTENT px: large.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from scenes import POSITIONS, SHAPE_COLORS

FOREGROUND_DISTANCE = 60.0
MIN_FOREGROUND_PIXELS = 16
SQUARE_MIN_FILL = 0.88
CIRCLE_MIN_FILL = 0.62
LARGE_MIN_EXTENT = 17


def hue_degrees(rgb) -> float:
    """HSV hue in [0, 360) of an RGB triple (any scale); 0 for gray."""
    r, g, b = (float(v) for v in rgb)
    mx, mn = max(r, g, b), min(r, g, b)
    c = mx - mn
    if c == 0:
        return 0.0
    if mx == r:
        h = ((g - b) / c) % 6.0
    elif mx == g:
        h = (b - r) / c + 2.0
    else:
        h = (r - g) / c + 4.0
    return (60.0 * h) % 360.0


NAMED_HUES = {name: hue_degrees(rgb) for name, rgb in SHAPE_COLORS.items()}


def nearest_color(hue: float) -> str:
    def circular(a, b):
        d = abs(a - b) % 360.0
        return min(d, 360.0 - d)
    return min(NAMED_HUES, key=lambda name: circular(hue, NAMED_HUES[name]))


def largest_component(mask: np.ndarray) -> np.ndarray:
    """The largest 4-connected component of a boolean mask, as a boolean mask."""
    h, w = mask.shape
    labels = np.zeros((h, w), dtype=np.int32)
    best_label, best_count, label = 0, 0, 0
    for y0 in range(h):
        for x0 in range(w):
            if not mask[y0, x0] or labels[y0, x0]:
                continue
            label += 1
            labels[y0, x0] = label
            queue, count = deque([(y0, x0)]), 0
            while queue:
                y, x = queue.popleft()
                count += 1
                for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                    if 0 <= ny < h and 0 <= nx < w and mask[ny, nx] and not labels[ny, nx]:
                        labels[ny, nx] = label
                        queue.append((ny, nx))
            if count > best_count:
                best_label, best_count = label, count
    return labels == best_label if best_count else np.zeros_like(mask)


@dataclass
class Analysis:
    found: bool
    color: str = ""
    hue: float = 0.0
    shape: str = ""
    fill: float = 0.0
    position: int = -1
    size: str = ""
    pixels: int = 0
    background: tuple = (0, 0, 0)

    @property
    def position_name(self) -> str:
        return POSITIONS[self.position][0] if self.position >= 0 else ""


def analyse(image: np.ndarray) -> Analysis:
    img = image.astype(np.float64)
    h, w, _ = img.shape
    ring = np.concatenate([img[0, :], img[h - 1, :], img[1:h - 1, 0], img[1:h - 1, w - 1]], axis=0)
    background = np.median(ring, axis=0)
    distance = np.sqrt(((img - background) ** 2).sum(axis=2))
    component = largest_component(distance > FOREGROUND_DISTANCE)
    count = int(component.sum())
    bg = tuple(float(v) for v in background)
    if count < MIN_FOREGROUND_PIXELS:
        return Analysis(found=False, pixels=count, background=bg)

    color_rgb = np.median(img[component], axis=0)
    hue = hue_degrees(color_rgb)
    ys, xs = np.nonzero(component)
    cx, cy = xs.mean() + 0.5, ys.mean() + 0.5
    col, row = min(int(3 * cx / w), 2), min(int(3 * cy / h), 2)
    bw, bh = xs.max() - xs.min() + 1, ys.max() - ys.min() + 1
    fill = count / float(bw * bh)
    shape = "square" if fill >= SQUARE_MIN_FILL else "circle" if fill >= CIRCLE_MIN_FILL else "triangle"
    size = "large" if max(bw, bh) >= LARGE_MIN_EXTENT else "small"
    return Analysis(True, nearest_color(hue), hue, shape, fill, 3 * row + col, size, count, bg)


def score(case, result: Analysis) -> dict:
    """Per-attribute agreement of one analysis with its evaluation case (scenes.EvalCase)."""
    ok_color = result.found and result.color == case.color
    ok_shape = result.found and result.shape == case.shape
    ok_position = result.found and result.position == case.position
    return {
        "index": case.index, "prompt": case.prompt, "seed": case.seed,
        "found": result.found, "color": result.color, "hue": round(result.hue, 1), "shape": result.shape,
        "fill": round(result.fill, 3), "position": result.position_name, "size": result.size,
        "pixels": result.pixels, "background_rgb": [round(v, 1) for v in result.background],
        "ok_color": ok_color, "ok_shape": ok_shape, "ok_position": ok_position,
        "ok_size": result.found and result.size == case.size,
        "ok": ok_color and ok_shape and ok_position,
    }


def summarize(rows: list[dict]) -> dict:
    n = max(len(rows), 1)
    return {key: sum(r[key] for r in rows) / n
            for key in ("ok", "ok_color", "ok_shape", "ok_position", "ok_size", "found")} | {"cases": len(rows)}
