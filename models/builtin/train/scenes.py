"""The procedural scene world of sdgen-tiny: vocabulary, captions and a batched GPU renderer.

A scene is one shape (circle, square or triangle) of one of seven saturated colors, small or large, centred in
one cell of a 3x3 grid of a 64x64 image, on a plain background of one of ten colors. Scenes are rendered in
torch on whatever device the caller uses (4x4 supersampling, so edges are anti-aliased) and captioned in plain
English from a few templates. Every random draw goes through the caller's torch.Generator, so a seeded run
renders the same batches.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import torch
import torch.nn.functional as F

IMAGE_SIZE = 64
SUPERSAMPLE = 4

# Shape colors: saturated and spread over the hue circle, so that the hue of a generated shape names its color.
SHAPE_COLORS = {
    "red": (230, 30, 30),
    "orange": (245, 140, 20),
    "yellow": (240, 220, 30),
    "green": (40, 180, 60),
    "blue": (40, 80, 230),
    "purple": (140, 50, 210),
    "pink": (245, 100, 180),
}
# Backgrounds: the seven shape colors plus three achromatic ones. A scene never puts a shape on its own color.
BACKGROUND_COLORS = {**SHAPE_COLORS, "white": (250, 250, 250), "black": (15, 15, 15), "gray": (128, 128, 128)}
SHAPES = ("circle", "square", "triangle")
SIZES = ("small", "large")
# Half the side of the shape's bounding box, in pixels (before the +-10% jitter).
SIZE_HALF_EXTENT = {"small": 7.0, "large": 10.0}
# 3x3 grid, row-major from the top left; the phrase is what captions say.
POSITIONS = (
    ("top left", "at the top left"),
    ("top", "at the top"),
    ("top right", "at the top right"),
    ("left", "on the left"),
    ("center", "in the center"),
    ("right", "on the right"),
    ("bottom left", "at the bottom left"),
    ("bottom", "at the bottom"),
    ("bottom right", "at the bottom right"),
)
# Cell centres along each axis, pixels; the position jitter is +-1.5 px, so even a large shape at a corner keeps
# the outermost pixel ring (what the analysis reads the background from) free.
CELL_CENTERS = (13.0, 32.0, 51.0)
POSITION_JITTER = 1.5
SIZE_JITTER = 0.10

# Caption templates and how often training uses each. Attributes a template leaves out are still drawn at random
# for the image, so the model learns that an unnamed attribute can be anything. The empty caption trains the
# unconditional branch for classifier-free guidance.
TEMPLATES = (
    ("full", 0.60),         # "a small red circle at the top left on a blue background"
    ("no_size", 0.10),      # "a red circle at the top left on a blue background"
    ("no_background", 0.10),  # "a small red circle at the top left"
    ("no_position", 0.10),  # "a small red circle on a blue background"
    ("empty", 0.10),        # ""
)


def _with_article(phrase: str) -> str:
    return ("an " if phrase[0] in "aeiou" else "a ") + phrase


def caption(template: str, size: str, color: str, shape: str, position: int, background: str) -> str:
    """The caption of one scene under one template (see TEMPLATES)."""
    where = POSITIONS[position][1]
    if template == "full":
        return f"{_with_article(f'{size} {color} {shape}')} {where} on {_with_article(background)} background"
    if template == "no_size":
        return f"{_with_article(f'{color} {shape}')} {where} on {_with_article(background)} background"
    if template == "no_background":
        return f"{_with_article(f'{size} {color} {shape}')} {where}"
    if template == "no_position":
        return f"{_with_article(f'{size} {color} {shape}')} on {_with_article(background)} background"
    if template == "empty":
        return ""
    raise ValueError(f"unknown caption template '{template}'")


def _axes():
    """The attribute axes in the order of the caption table index (outermost first)."""
    return (
        [t for t, _ in TEMPLATES],
        list(SIZES),
        list(SHAPE_COLORS),
        list(SHAPES),
        list(range(len(POSITIONS))),
        list(BACKGROUND_COLORS),
    )


def all_captions() -> list[str]:
    """Every caption, indexed by caption_index(template, size, color, shape, position, background)."""
    return [caption(t, s, c, sh, p, b) for t, s, c, sh, p, b in itertools.product(*_axes())]


def caption_index(template, size, color, shape, position, background):
    """Index into all_captions(); works on python ints and on integer tensors alike."""
    dims = [len(a) for a in _axes()]
    index = template
    for value, dim in zip((size, color, shape, position, background), dims[1:]):
        index = index * dim + value
    return index


@dataclass
class SceneBatch:
    """Attribute indices of a batch of scenes (integer tensors of shape [n]) and the geometry jitter."""
    color: torch.Tensor       # into SHAPE_COLORS
    shape: torch.Tensor       # into SHAPES
    size: torch.Tensor        # into SIZES
    position: torch.Tensor    # into POSITIONS
    background: torch.Tensor  # into BACKGROUND_COLORS
    template: torch.Tensor    # into TEMPLATES
    offset: torch.Tensor      # [n, 2] pixel offset (x, y) of the centre
    scale: torch.Tensor       # [n] factor on the size

    def caption_indices(self) -> torch.Tensor:
        return caption_index(self.template, self.size, self.color, self.shape, self.position, self.background)


def sample_scenes(n: int, generator: torch.Generator, device) -> SceneBatch:
    """n random scenes; the background is uniform over the nine colors other than the shape's."""
    def randint(high):
        return torch.randint(0, high, (n,), generator=generator, device=device)

    color = randint(len(SHAPE_COLORS))
    # Shape color i is background color i, so skipping 1..9 steps ahead never lands on the shape's own color.
    background = (color + 1 + randint(len(BACKGROUND_COLORS) - 1)) % len(BACKGROUND_COLORS)
    probs = torch.tensor([p for _, p in TEMPLATES], device=device)
    template = torch.multinomial(probs.expand(n, -1), 1, generator=generator).squeeze(1)
    offset = (torch.rand((n, 2), generator=generator, device=device) * 2 - 1) * POSITION_JITTER
    scale = 1 + (torch.rand((n,), generator=generator, device=device) * 2 - 1) * SIZE_JITTER
    return SceneBatch(color, randint(len(SHAPES)), randint(len(SIZES)), randint(len(POSITIONS)), background,
                      template, offset, scale)


def render(scenes: SceneBatch) -> torch.Tensor:
    """Images [n, 3, 64, 64] in [-1, 1]: the shape's coverage of each pixel (4x4 supersampled) blends the shape
    color over the background color."""
    device = scenes.color.device
    n = scenes.color.shape[0]
    hi = IMAGE_SIZE * SUPERSAMPLE
    coords = (torch.arange(hi, device=device, dtype=torch.float32) + 0.5) / SUPERSAMPLE  # sample centres, px
    ys = coords.view(1, hi, 1)
    xs = coords.view(1, 1, hi)

    centers = torch.tensor(CELL_CENTERS, device=device)
    cx = (centers[scenes.position % 3] + scenes.offset[:, 0]).view(n, 1, 1)
    cy = (centers[scenes.position // 3] + scenes.offset[:, 1]).view(n, 1, 1)
    half = torch.tensor([SIZE_HALF_EXTENT[s] for s in SIZES], device=device)
    h = (half[scenes.size] * scenes.scale).view(n, 1, 1)

    dx, dy = xs - cx, ys - cy
    circle = dx * dx + dy * dy <= h * h
    square = (dx.abs() <= h) & (dy.abs() <= h)
    # Upward isosceles triangle filling the bounding box: apex at the top centre, base along the bottom.
    triangle = (dy >= -h) & (dy <= h) & (dx.abs() <= (dy + h) * 0.5)
    kind = scenes.shape.view(n, 1, 1)
    inside = torch.where(kind == 0, circle, torch.where(kind == 1, square, triangle))
    coverage = F.avg_pool2d(inside.float().unsqueeze(1), SUPERSAMPLE)  # [n, 1, 64, 64]

    shape_rgb = torch.tensor(list(SHAPE_COLORS.values()), device=device, dtype=torch.float32) / 127.5 - 1
    bg_rgb = torch.tensor(list(BACKGROUND_COLORS.values()), device=device, dtype=torch.float32) / 127.5 - 1
    fg = shape_rgb[scenes.color].view(n, 3, 1, 1)
    bg = bg_rgb[scenes.background].view(n, 3, 1, 1)
    return bg + (fg - bg) * coverage


# ---- The evaluation grid: every color x shape x position, with a deterministic size and a contrasting background.

EVAL_BACKGROUND_CYCLE = ("white", "black", "gray", "contrast")


def contrast_background(color_index: int) -> str:
    """A chromatic background at least ~90 degrees of hue away from the shape color (three places on in the
    list of seven)."""
    names = list(SHAPE_COLORS)
    return names[(color_index + 3) % len(names)]


@dataclass(frozen=True)
class EvalCase:
    index: int
    color: str
    shape: str
    size: str
    position: int  # into POSITIONS
    background: str
    seed: int

    @property
    def prompt(self) -> str:
        return caption("full", self.size, self.color, self.shape, self.position, self.background)

    @property
    def position_name(self) -> str:
        return POSITIONS[self.position][0]


def eval_grid(seed_base: int = 1000) -> list[EvalCase]:
    """7 colors x 3 shapes x 9 positions = 189 prompts. Size alternates with the index; the background cycles
    through white, black, gray and the color's contrast background."""
    cases = []
    colors = list(SHAPE_COLORS)
    for ci, color in enumerate(colors):
        for si, shape in enumerate(SHAPES):
            for p in range(len(POSITIONS)):
                i = len(cases)
                bg = EVAL_BACKGROUND_CYCLE[i % len(EVAL_BACKGROUND_CYCLE)]
                bg = contrast_background(ci) if bg == "contrast" else bg
                cases.append(EvalCase(i, color, shape, SIZES[(ci + si + p) % 2], p, bg, seed_base + i))
    return cases


def test_grid(seed_base: int = 2000) -> list[EvalCase]:
    """21 prompts for the engine's semantic test (each color 3x, each shape 7x, each position 2-3x): case i has
    color i mod 7, shape i mod 3, position i mod 9, size i mod 2, background cycling as in eval_grid."""
    cases = []
    colors = list(SHAPE_COLORS)
    for i in range(21):
        ci = i % len(colors)
        bg = EVAL_BACKGROUND_CYCLE[i % len(EVAL_BACKGROUND_CYCLE)]
        bg = contrast_background(ci) if bg == "contrast" else bg
        cases.append(EvalCase(i, colors[ci], SHAPES[i % 3], SIZES[i % 2], i % 9, bg, seed_base + i))
    return cases


def scenes_for_cases(cases: list[EvalCase], device) -> SceneBatch:
    """The ground-truth scenes of evaluation cases (no jitter), to check the analysis on exact renders."""
    n = len(cases)

    def t(values):
        return torch.tensor(values, device=device, dtype=torch.long)

    colors, bgs = list(SHAPE_COLORS), list(BACKGROUND_COLORS)
    return SceneBatch(
        color=t([colors.index(c.color) for c in cases]),
        shape=t([SHAPES.index(c.shape) for c in cases]),
        size=t([SIZES.index(c.size) for c in cases]),
        position=t([c.position for c in cases]),
        background=t([bgs.index(c.background) for c in cases]),
        template=t([0] * n),
        offset=torch.zeros((n, 2), device=device),
        scale=torch.ones((n,), device=device),
    )
