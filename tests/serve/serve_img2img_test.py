"""sdgen serve's POST /sdapi/v1/img2img over loopback on the built-in model (lavapipe in CI): image to image and
inpainting equal the sdgen CLI's PNGs (-i, --strength, --mask) bit for bit, through plain `requests` and the PyPI
client `webuiapi`; every bad image field is a 422 naming it, and the next request works.

Usage: serve_img2img_test.py SDGEN WORKDIR [unittest args]"""
import base64
import io
import json
import os
import struct
import subprocess
import sys
import unittest
import zlib

import requests
import webuiapi
from PIL import Image

from serve_support import Server

SDGEN, WORKDIR = sys.argv[1:3]
PROMPT = "a large red circle in the center on a blue background"


def read(path):
    with open(path, "rb") as f:
        return f.read()


def b64(data):
    return base64.b64encode(data).decode()


def pngs(response):
    return [base64.b64decode(i) for i in response.json()["images"]]


_cli_pngs = {}


def cli(*args):
    """One image from the sdgen command line; returns its PNG bytes (each distinct command run once)."""
    if args not in _cli_pngs:
        out = os.path.join(WORKDIR, f"cli-{len(_cli_pngs)}.png")
        subprocess.run([SDGEN, "-p", PROMPT, "-o", out, *args], check=True, capture_output=True)
        _cli_pngs[args] = read(out)
    return _cli_pngs[args]


def png_header_only_huge(width, height):
    """A valid, tiny PNG file whose header says width x height (one IDAT of a zlib stream that is cut short: the
    container is well formed, the pixels are not there; the size must be refused before they are looked for)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")


class ServeImg2Img(unittest.TestCase):
    # image to image: 4 steps at strength 0.6 run the last int(4 * 0.6) = 2 (the model's sampler and CFG)
    @classmethod
    def setUpClass(cls):
        global I2I_ARGS
        # The init image: a CLI txt2img picture; the mask: the left half white (repaint), the right half black.
        cls.init_path = os.path.join(WORKDIR, "init.png")
        cls.init = cli("-s", "3", "--steps", "2", "-W", "32", "-H", "32")
        with open(cls.init_path, "wb") as f:
            f.write(cls.init)
        mask = Image.new("L", (32, 32), 0)
        mask.paste(255, (0, 0, 16, 32))
        cls.mask_path = os.path.join(WORKDIR, "mask.png")
        mask.save(cls.mask_path)
        cls.inverted_path = os.path.join(WORKDIR, "mask-inverted.png")
        Image.eval(mask, lambda v: 255 - v).save(cls.inverted_path)
        cls.server = Server(SDGEN, WORKDIR, "img2img", "--max-pixels", str(64 * 64))
        I2I_ARGS = ("--steps", "4", "-i", cls.init_path, "--strength", "0.6")

    @classmethod
    def tearDownClass(cls):
        assert cls.server.stop() == 0, "the server did not stop cleanly"

    def img2img(self, body, timeout=600):
        return requests.post(self.server.api("/sdapi/v1/img2img"), json=body, timeout=timeout)

    def test_img2img_matches_cli_bit_for_bit(self):
        body = {"prompt": PROMPT, "seed": 11, "steps": 4, "denoising_strength": 0.6, "batch_size": 2,
                "init_images": [b64(self.init)]}
        r = self.img2img(body)
        self.assertEqual(r.status_code, 200, r.text)
        info = json.loads(r.json()["info"])
        self.assertEqual(info["all_seeds"], [11, 12])
        self.assertEqual(info["denoising_strength"], 0.6)
        self.assertIn("Denoising strength: 0.6", info["infotexts"][0])
        self.assertEqual(r.json()["parameters"]["denoising_strength"], 0.6)
        self.assertIsNone(r.json()["parameters"]["init_images"])  # echoed only with include_init_images
        self.assertEqual(pngs(r), [cli(*I2I_ARGS, "-s", "11"), cli(*I2I_ARGS, "-s", "12")])
        log = {l["job"]: l for l in self.server.request_lines("/sdapi/v1/img2img", [info["sdgen_job"]])}
        self.assertEqual(log[info["sdgen_job"]]["mode"], "img2img")
        self.assertEqual(log[info["sdgen_job"]]["size"], "32x32")

    def test_inpainting_and_inverted_mask_match_cli(self):
        base = {"prompt": PROMPT, "seed": 21, "steps": 3, "denoising_strength": 1.0, "width": 32, "height": 32,
                "init_images": ["data:image/png;base64," + b64(self.init)], "mask": b64(read(self.mask_path)),
                "mask_blur": 0, "inpainting_fill": 1, "inpaint_full_res": False}
        args = ("-s", "21", "--steps", "3", "-i", self.init_path, "--strength", "1")
        r = self.img2img(base)
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(pngs(r), [cli(*args, "--mask", self.mask_path)])
        r = self.img2img(dict(base, inpainting_mask_invert=1))
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(pngs(r), [cli(*args, "--mask", self.inverted_path)])

    def test_webuiapi_client(self):
        # webuiapi sends every field with webui's defaults; sampler and CFG as the built-in model's own defaults
        # (Euler a, 3), so the image is the first one of test_img2img_matches_cli_bit_for_bit.
        api = webuiapi.WebUIApi(host="127.0.0.1", port=self.server.port, sampler="Euler a", steps=4)
        init = Image.open(self.init_path)
        result = api.img2img(images=[init], prompt=PROMPT, seed=11, width=32, height=32, cfg_scale=3,
                             denoising_strength=0.6, include_init_images=True)
        expected = Image.open(io.BytesIO(cli(*I2I_ARGS, "-s", "11")))
        self.assertEqual(result.image.tobytes(), expected.tobytes())
        self.assertEqual(result.image.info["parameters"], expected.info["parameters"])
        self.assertEqual(len(result.parameters["init_images"]), 1)  # include_init_images echoes it

    def assert_422(self, body, loc, fragment):
        r = self.img2img(body, timeout=60)
        self.assertEqual(r.status_code, 422, r.text)
        detail = r.json()["detail"]
        self.assertIn(loc, [d["loc"] for d in detail], detail)
        self.assertIn(fragment, json.dumps(detail))
        self.assertLess(len(r.content), 8192)

    def test_bad_images_and_fields_then_a_good_request(self):
        init = [b64(self.init)]
        self.assert_422({"prompt": "x"}, ["body", "init_images"], "required")
        self.assert_422({"init_images": init * 2}, ["body", "init_images"], "exactly one")
        self.assert_422({"init_images": ["%%%not base64%%%"]}, ["body", "init_images", 0], "not valid base64")
        self.assert_422({"init_images": [b64(b"hello, I am no image")]}, ["body", "init_images", 0],
                        "not a PNG or JPEG")
        self.assert_422({"init_images": [5]}, ["body", "init_images", 0], "expected a base64")
        # 8000 x 8000 says the header: refused from the header, nothing decoded (the pixels are not even there).
        self.assert_422({"init_images": [b64(png_header_only_huge(8000, 8000))]}, ["body", "init_images", 0],
                        "at most 4096")
        odd = io.BytesIO()
        Image.new("RGB", (36, 32)).save(odd, format="PNG")
        self.assert_422({"init_images": [b64(odd.getvalue())]}, ["body", "init_images", 0], "multiples of 8")
        small = io.BytesIO()
        Image.new("L", (16, 16)).save(small, format="PNG")
        self.assert_422({"init_images": init, "mask": b64(small.getvalue())}, ["body", "mask"],
                        "they must be the same size")
        self.assert_422({"init_images": init, "mask": "data:image/png;base64"}, ["body", "mask"], "not valid base64")
        self.assert_422({"init_images": init, "width": 64}, ["body", "width"], "does not resize")
        self.assert_422({"init_images": init, "denoising_strength": 1.5}, ["body", "denoising_strength"], "out of range")
        self.assert_422({"init_images": init, "steps": 2, "denoising_strength": 0.2}, ["body", "denoising_strength"],
                        "leaves no denoising step")
        mask = b64(read(self.mask_path))
        self.assert_422({"init_images": init, "mask": mask, "inpaint_full_res": True}, ["body", "inpaint_full_res"],
                        "not supported")
        self.assert_422({"init_images": init, "mask": mask, "mask_blur": 4}, ["body", "mask_blur"], "not supported")
        self.assert_422({"init_images": init, "mask": mask, "inpainting_fill": 0}, ["body", "inpainting_fill"],
                        "not supported")
        self.assert_422({"init_images": init, "enable_hr": True, "steps": 0}, ["body", "steps"], "out of range")
        self.assert_422({"init_images": init, "initial_noise_multiplier": 2}, ["body", "initial_noise_multiplier"],
                        "not supported")
        # Without a mask, webui's inpainting defaults (what webuiapi always sends) change nothing and are accepted.
        r = self.img2img({"prompt": PROMPT, "init_images": init, "seed": 5, "steps": 2, "denoising_strength": 0.5,
                          "mask_blur": 4, "inpainting_fill": 0, "inpaint_full_res": True})
        self.assertEqual(r.status_code, 200, r.text)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)
