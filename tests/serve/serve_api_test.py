"""sdgen serve end to end over loopback on the built-in model (lavapipe in CI): webui's API with plain
`requests` and the PyPI client `webuiapi`, images bit-identical to the sdgen CLI's, progress, interrupt,
png-info, model switching, hostile requests, a client that disconnects, 32 concurrent clients over a queue of 8,
and two engines on one device (--devices 0,0).

Usage: serve_api_test.py SDGEN TINY_SD1_MODEL WORKDIR [unittest args]"""
import base64
import concurrent.futures
import io
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
import unittest

import requests
import webuiapi
from PIL import Image

from serve_support import Server, wait_idle

SDGEN, TINY_SD1, WORKDIR = sys.argv[1:4]
TINY_SDXL = os.path.join(os.path.dirname(os.path.abspath(TINY_SD1)), "tiny-sdxl")
TINY_REFINER = os.path.join(os.path.dirname(os.path.abspath(TINY_SD1)), "tiny-sdxl-refiner")
PROMPT = "a large red circle in the center on a blue background"
FAST = {"prompt": PROMPT, "steps": 2, "width": 32, "height": 32}  # ~1 s on lavapipe


def txt2img(server, body, timeout=300, **kw):
    return requests.post(server.api("/sdapi/v1/txt2img"), json=body, timeout=timeout, **kw)


def pngs(response):
    return [base64.b64decode(i) for i in response.json()["images"]]


def write_tiny_lora(path):
    """A kohya LoRA of one attention projection of tiny-sd1's UNet (rank 2, alpha 1), F32."""
    key = "lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn1_to_q"
    down = [((i * 7) % 13 - 6) / 20 for i in range(2 * 32)]
    up = [((i * 5) % 11 - 5) / 20 for i in range(32 * 2)]
    data = struct.pack("<64f", *down) + struct.pack("<64f", *up) + struct.pack("<f", 1.0)
    header = {key + ".lora_down.weight": {"dtype": "F32", "shape": [2, 32], "data_offsets": [0, 256]},
              key + ".lora_up.weight": {"dtype": "F32", "shape": [32, 2], "data_offsets": [256, 512]},
              key + ".alpha": {"dtype": "F32", "shape": [], "data_offsets": [512, 516]}}
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


def info(response):
    return json.loads(response.json()["info"])


def read(path):
    with open(path, "rb") as f:
        return f.read()


def cli_png(name, seed, batch_count=1, extra=()):
    """The same generation through the sdgen command line."""
    out = os.path.join(WORKDIR, name + ".png")
    subprocess.run([SDGEN, "-p", PROMPT, "-s", str(seed), "--steps", "2", "-W", "32", "-H", "32",
                    "--batch-count", str(batch_count), "-o", out, *extra], check=True, capture_output=True)
    if batch_count == 1:
        return [read(out)]
    return [read(out[:-4] + f"-{i + 1}.png") for i in range(batch_count)]


def burst(server, seeds, steps=2):
    """One concurrent request per seed; returns {seed: response}."""
    def one(seed):
        try:
            return seed, txt2img(server, dict(FAST, seed=seed, steps=steps))
        except requests.RequestException as e:  # counted as lost below
            return seed, e
    with concurrent.futures.ThreadPoolExecutor(len(seeds)) as pool:
        return dict(pool.map(one, seeds))


class ServeApi(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Models: the tiny SD1 test model, and a file that is no model, whose load fails.
        models = os.path.join(WORKDIR, "models")
        os.makedirs(models, exist_ok=True)
        if not os.path.exists(os.path.join(models, "tiny-sd1")):
            os.symlink(os.path.abspath(TINY_SD1), os.path.join(models, "tiny-sd1"))
        if not os.path.exists(os.path.join(models, "tiny-sdxl")):
            os.symlink(TINY_SDXL, os.path.join(models, "tiny-sdxl"))
        if not os.path.exists(os.path.join(models, "tiny-sdxl-refiner")):
            os.symlink(TINY_REFINER, os.path.join(models, "tiny-sdxl-refiner"))
        with open(os.path.join(models, "broken.safetensors"), "wb") as f:
            f.write(b"\x08\x00\x00\x00\x00\x00\x00\x00not json")
        loras = os.path.join(WORKDIR, "loras")
        os.makedirs(loras, exist_ok=True)
        write_tiny_lora(os.path.join(loras, "tinylora.safetensors"))
        cls.server = Server(SDGEN, WORKDIR, "main", "--queue", "8", "--models-dir", models,
                            "--max-pixels", str(128 * 128), "--lora-dir", loras)
        # The first job compiles or loads the kernels of this size (cached by later runs).
        r = txt2img(cls.server, dict(FAST, seed=1), timeout=900)
        assert r.status_code == 200, r.text

    @classmethod
    def tearDownClass(cls):
        assert cls.server.stop() == 0, "the server did not stop cleanly"

    def test_ping_models_samplers_options(self):
        s = self.server
        self.assertEqual(requests.get(s.api("/internal/ping")).json(), {})
        models = requests.get(s.api("/sdapi/v1/sd-models")).json()
        titles = [m["title"] for m in models]
        self.assertEqual(titles[0], "sdgen-tiny")
        self.assertIn("tiny-sd1", titles)
        self.assertTrue({"title", "model_name", "hash", "sha256", "filename", "config"} <= set(models[0]))
        names = [x["name"] for x in requests.get(s.api("/sdapi/v1/samplers")).json()]
        self.assertEqual(names, ["Euler a", "Euler", "DDIM", "DPM++ 2M", "DPM++ 2M Karras", "DPM++ SDE",
                                 "DPM++ SDE Karras", "DPM++ 2M SDE", "DPM++ 2M SDE Karras", "DPM++ 2S a",
                                 "DPM++ 2S a Karras", "LMS", "LMS Karras", "Heun", "DPM2", "DPM2 Karras", "DPM2 a",
                                 "DPM2 a Karras", "UniPC", "LCM"])
        self.assertEqual(requests.get(s.api("/sdapi/v1/options")).json()["sd_model_checkpoint"], "sdgen-tiny")
        self.assertEqual(requests.get(s.api("/no/such/route")).status_code, 404)

    def test_txt2img_matches_cli_bit_for_bit(self):
        r = txt2img(self.server, dict(FAST, seed=42, batch_size=2))
        self.assertEqual(r.status_code, 200, r.text)
        i = info(r)
        self.assertEqual(i["all_seeds"], [42, 43])
        self.assertEqual(i["seed"], 42)
        self.assertEqual(len(i["infotexts"]), 2)
        self.assertIn("Seed: 43, Size: 32x32, Model: sdgen-tiny", i["infotexts"][1])
        self.assertEqual(r.json()["parameters"]["batch_size"], 2)
        self.assertEqual(pngs(r), cli_png("cli42", 42, batch_count=2))
        # n_iter is the same sequence of seeds.
        r2 = txt2img(self.server, dict(FAST, seed=42, n_iter=2))
        self.assertEqual(pngs(r2), pngs(r))

    def test_webuiapi_client(self):
        api = webuiapi.WebUIApi(host="127.0.0.1", port=self.server.port, sampler="Euler a", steps=2)
        result = api.txt2img(prompt=PROMPT, seed=7, width=32, height=32, cfg_scale=3)
        self.assertEqual(result.image.size, (32, 32))
        self.assertEqual(result.info["all_seeds"], [7])
        self.assertIn("Seed: 7", result.image.info["parameters"])
        self.assertIn("sdgen-tiny", api.util_get_model_names())
        png = api.png_info(result.image)
        self.assertEqual(png.info, result.image.info["parameters"])
        self.assertEqual(api.get_progress()["progress"], 0)
        self.assertEqual(api.interrupt(), {})

    def test_model_switch_through_options(self):
        s = self.server
        try:
            self.assertEqual(requests.post(s.api("/sdapi/v1/options"), json={"sd_model_checkpoint": "tiny-sd1"}).status_code, 200)
            self.assertEqual(requests.get(s.api("/sdapi/v1/options")).json()["sd_model_checkpoint"], "tiny-sd1")
            r = txt2img(s, {"prompt": "x", "seed": 3, "steps": 2, "width": 16, "height": 16})
            self.assertEqual(r.status_code, 200, r.text)
            self.assertEqual(info(r)["sd_model_name"], "tiny-sd1")
            self.assertIn("Model: tiny-sd1", info(r)["infotexts"][0])
            bad = requests.post(s.api("/sdapi/v1/options"), json={"sd_model_checkpoint": "nope"})
            self.assertEqual(bad.status_code, 422)
            self.assertEqual(bad.json()["detail"][0]["loc"], ["body", "sd_model_checkpoint"])
        finally:
            requests.post(s.api("/sdapi/v1/options"), json={"sd_model_checkpoint": "sdgen-tiny"})
        # A per-request override, without changing the server's model.
        r = txt2img(s, {"prompt": "x", "seed": 3, "steps": 2, "width": 16, "height": 16,
                        "override_settings": {"sd_model_checkpoint": "tiny-sd1"}})
        self.assertEqual(info(r)["sd_model_name"], "tiny-sd1")
        self.assertEqual(requests.get(s.api("/sdapi/v1/options")).json()["sd_model_checkpoint"], "sdgen-tiny")

    def test_sdxl_micro_conditioning(self):
        # sdgen's SDXL fields (docs/serve.md): the image and parameters of the CLI's --original-size, --crop and
        # --target-size; a negative size without the other is a 422 naming the field.
        micro = {"original_size": [48, 32], "crop": [8, 0], "target_size": [24, 16]}
        body = {"prompt": PROMPT, "seed": 5, "steps": 2, "width": 24, "height": 16, "sampler_name": "Euler",
                "cfg_scale": 5, "override_settings": {"sd_model_checkpoint": "tiny-sdxl"}}
        r = txt2img(self.server, dict(body, **micro), timeout=900)
        self.assertEqual(r.status_code, 200, r.text)
        self.assertIn("Original size: 48x32, Crop: 8x0, Target size: 24x16", info(r)["infotexts"][0])
        self.assertEqual(r.json()["parameters"]["original_size"], [48, 32])
        plain = txt2img(self.server, body)
        self.assertEqual(plain.status_code, 200, plain.text)
        cli = os.path.join(WORKDIR, "sdxl-micro.png")
        subprocess.run([SDGEN, "-m", TINY_SDXL, "-p", PROMPT, "-s", "5", "--steps", "2", "-W", "24", "-H", "16",
                        "--sampler", "euler", "--cfg-scale", "5", "--original-size", "48,32", "--crop", "8,0",
                        "--target-size", "24,16", "-o", cli], check=True, capture_output=True)

        def pixels(png):
            return Image.open(io.BytesIO(png)).convert("RGB").tobytes()
        self.assertEqual(pixels(pngs(r)[0]), pixels(read(cli)))
        self.assertNotEqual(pixels(pngs(r)[0]), pixels(pngs(plain)[0]))
        bad = txt2img(self.server, dict(body, negative_original_size=[8, 8]))
        self.assertEqual(bad.status_code, 422)
        self.assertEqual(bad.json()["detail"][0]["loc"], ["body", "negative_original_size"])
        bad = txt2img(self.server, dict(body, crop=[1, -1]))
        self.assertEqual(bad.status_code, 422)
        self.assertEqual(bad.json()["detail"][0]["loc"], ["body", "crop"])

    def test_sdxl_refiner(self):
        # webui's refiner_checkpoint / refiner_switch_at (docs/serve.md): the image and parameters of the CLI's
        # --refiner / --refiner-start (the switch as diffusers' denoising_end / denoising_start); a refiner with
        # an SD 1.x base fails naming the field; unknown names and switches outside (0, 1) are 422s; inpainting
        # (img2img with a mask) with the refiner gives the CLI's image too.
        body = {"prompt": PROMPT, "negative_prompt": "blurry", "seed": 3, "steps": 4, "width": 24, "height": 16,
                "sampler_name": "Euler", "cfg_scale": 5, "override_settings": {"sd_model_checkpoint": "tiny-sdxl"},
                "refiner_checkpoint": "tiny-sdxl-refiner", "refiner_switch_at": 0.5}
        r = txt2img(self.server, body, timeout=900)
        self.assertEqual(r.status_code, 200, r.text)
        self.assertIn("Model: tiny-sdxl, Refiner: tiny-sdxl-refiner, Refiner switch at: 0.5, Aesthetic score: 6, "
                      "Negative aesthetic score: 2.5", info(r)["infotexts"][0])
        self.assertEqual(r.json()["parameters"]["refiner_checkpoint"], "tiny-sdxl-refiner")
        self.assertEqual(r.json()["parameters"]["refiner_switch_at"], 0.5)
        cli = os.path.join(WORKDIR, "sdxl-refiner.png")
        subprocess.run([SDGEN, "-m", TINY_SDXL, "--refiner", TINY_REFINER, "--refiner-start", "0.5", "-p", PROMPT,
                        "-n", "blurry", "-s", "3", "--steps", "4", "-W", "24", "-H", "16", "--sampler", "euler",
                        "--cfg-scale", "5", "-o", cli], check=True, capture_output=True)

        def pixels(png):
            return Image.open(io.BytesIO(png)).convert("RGB").tobytes()
        self.assertEqual(pixels(pngs(r)[0]), pixels(read(cli)))
        plain = txt2img(self.server, dict(body, refiner_checkpoint=None))
        self.assertEqual(plain.status_code, 200, plain.text)
        self.assertNotIn("Refiner", info(plain)["infotexts"][0])
        self.assertIsNone(plain.json()["parameters"]["refiner_checkpoint"])
        self.assertNotEqual(pixels(pngs(plain)[0]), pixels(pngs(r)[0]))
        sd1 = txt2img(self.server, dict(body, override_settings={"sd_model_checkpoint": "tiny-sd1"}))
        self.assertEqual(sd1.status_code, 500)
        self.assertIn("refiner_checkpoint 'tiny-sdxl-refiner' needs an SDXL base model; 'tiny-sd1' is not an SDXL "
                      "model", sd1.text)
        for field, value, words in (("refiner_checkpoint", "nope", "unknown model"),
                                    ("refiner_switch_at", 1.0, "between 0 and 1, exclusive"),
                                    ("refiner_switch_at", "x", "")):
            bad = txt2img(self.server, dict(body, **{field: value}))
            self.assertEqual(bad.status_code, 422, bad.text)
            self.assertEqual(bad.json()["detail"][0]["loc"], ["body", field])
            self.assertIn(words, bad.json()["detail"][0]["msg"])
        again = txt2img(self.server, body)  # after the failed job: the same image again
        self.assertEqual(again.status_code, 200, again.text)
        self.assertEqual(pixels(pngs(again)[0]), pixels(pngs(r)[0]))
        # Inpainting with the refiner (img2img with a mask): the CLI's -i --mask --refiner image.
        fixtures = os.path.join(os.path.dirname(TINY_REFINER), "fixtures")
        init, mask = os.path.join(fixtures, "i2i_init.png"), os.path.join(fixtures, "i2i_mask.png")
        inpaint = {k: v for k, v in body.items() if k not in ("width", "height")}
        inpaint.update({"init_images": [base64.b64encode(read(init)).decode()], "denoising_strength": 1,
                        "mask": base64.b64encode(read(mask)).decode(), "mask_blur": 0})
        r = requests.post(self.server.api("/sdapi/v1/img2img"), json=inpaint, timeout=900)
        self.assertEqual(r.status_code, 200, r.text)
        self.assertIn("Denoising strength: 1, Refiner: tiny-sdxl-refiner, Refiner switch at: 0.5",
                      info(r)["infotexts"][0])
        subprocess.run([SDGEN, "-m", TINY_SDXL, "--refiner", TINY_REFINER, "--refiner-start", "0.5", "-p", PROMPT,
                        "-n", "blurry", "-s", "3", "--steps", "4", "-i", init, "--mask", mask, "--strength", "1",
                        "--sampler", "euler", "--cfg-scale", "5", "-o", cli], check=True, capture_output=True)
        self.assertEqual(pixels(pngs(r)[0]), pixels(read(cli)))

    def test_lora_prompt_tags(self):
        # docs/lora.md: the tag is merged into the engine's model (and out again), the infotext keeps it.
        s = self.server
        body = {"seed": 3, "steps": 2, "width": 16, "height": 16, "override_settings": {"sd_model_checkpoint": "tiny-sd1"}}
        plain = txt2img(s, dict(body, prompt="a red circle"))
        tagged = txt2img(s, dict(body, prompt="a red circle <lora:tinylora:3>"))
        again = txt2img(s, dict(body, prompt="a red circle"))
        for r in (plain, tagged, again):
            self.assertEqual(r.status_code, 200, r.text)
        self.assertTrue(info(tagged)["infotexts"][0].startswith("a red circle <lora:tinylora:3>\nSteps: 2"))
        self.assertNotEqual(pngs(tagged)[0], pngs(plain)[0])
        self.assertEqual(pngs(again)[0], pngs(plain)[0])  # merged out again, bit for bit
        missing = txt2img(s, dict(body, prompt="x <lora:nope:1>"))
        self.assertEqual(missing.status_code, 500)
        self.assertIn("no nope.safetensors in the LoRA folder", missing.text)

    def test_png_info(self):
        png = cli_png("pnginfo", 5)[0]
        r = requests.post(self.server.api("/sdapi/v1/png-info"), json={"image": base64.b64encode(png).decode()})
        self.assertEqual(r.status_code, 200, r.text)
        p = r.json()["parameters"]
        self.assertEqual(p["Prompt"], PROMPT)
        self.assertEqual((p["Seed"], p["Steps"], p["Size-1"], p["Size-2"]), ("5", "2", "32", "32"))
        self.assertTrue(r.json()["info"].startswith(PROMPT + "\nSteps: 2"))
        bad = requests.post(self.server.api("/sdapi/v1/png-info"), json={"image": "not an image"})
        self.assertEqual(bad.status_code, 422)

    def test_progress_during_a_run_and_interrupt(self):
        s = self.server
        wait_idle(s)
        holder = {}
        t = threading.Thread(target=lambda: holder.update(r=txt2img(s, dict(FAST, seed=9, steps=400))))
        t0 = time.time()
        t.start()
        seen = None
        while time.time() - t0 < 120:
            p = requests.get(s.api("/sdapi/v1/progress")).json()
            if p["state"]["sampling_step"] >= 2:
                seen = p
                break
            time.sleep(0.05)
        self.assertIsNotNone(seen, "progress never showed a running job")
        self.assertGreater(seen["progress"], 0)
        self.assertEqual(seen["state"]["sampling_steps"], 400)
        self.assertTrue(seen["state"]["job"].startswith("txt2img-"))
        self.assertIsNotNone(seen["current_image"])  # the live preview, a base64 PNG
        self.assertEqual(requests.post(s.api("/sdapi/v1/interrupt")).json(), {})
        t.join(120)
        r = holder["r"]
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(info(r)["sdgen_outcome"], "interrupted")
        self.assertEqual(r.json()["images"], [])
        self.assertLess(time.time() - t0, 100)  # 400 steps would take minutes
        self.assertEqual(txt2img(s, dict(FAST, seed=10)).status_code, 200)

    def assert_422(self, body, loc, fragment, raw=None):
        r = (requests.post(self.server.api("/sdapi/v1/txt2img"), data=raw, timeout=60) if raw is not None
             else txt2img(self.server, body))
        self.assertEqual(r.status_code, 422, r.text)
        detail = r.json()["detail"]
        self.assertIn(loc, [d["loc"] for d in detail], detail)
        self.assertIn(fragment, json.dumps(detail))
        self.assertLess(len(r.content), 4096)  # errors quote shortened input

    def test_hostile_requests_then_a_good_one(self):
        self.assert_422(None, ["body", 11], "JSON decode error", raw=b'{"steps": ')
        self.assert_422(None, ["body"], "nested deeper", raw=b"[" * 100000 + b"]" * 100000)
        self.assert_422({"steps": "twenty"}, ["body", "steps"], "expected an integer from 1 to 1000")
        self.assert_422({"cfg_scale": [1]}, ["body", "cfg_scale"], "expected a number")
        self.assert_422({"prompt": 5}, ["body", "prompt"], "expected a string")
        self.assert_422({"width": 4096, "height": 4096}, ["body", "width"], "--max-pixels")
        self.assert_422({"width": 10 ** 30}, ["body", "width"], "expected an integer from 8 to 8192")
        self.assert_422({"width": 36}, ["body", "width"], "not a multiple of 8")
        self.assert_422({"batch_size": 64, "n_iter": 64}, ["body", "n_iter"], "more than 64")
        self.assert_422({"sampler_name": "LMS" * 50}, ["body", "sampler_name"], "accepted: 'Euler a'")
        self.assert_422({"sampler_name": "LMS" * 1000}, ["body", "sampler_name"], "too long")
        self.assert_422({"override_settings": {"sd_model_checkpoint": "nope"}},
                        ["body", "override_settings", "sd_model_checkpoint"], "unknown model")
        self.assert_422({"enable_hr": True}, ["body", "enable_hr"], "not supported")
        self.assert_422({"refiner_checkpoint": "sd_xl_refiner_1.0"}, ["body", "refiner_checkpoint"], "unknown model")
        self.assert_422({"prompt": "x" * 20000}, ["body", "prompt"], "too long")
        big = b'{"prompt": "' + b"x" * (50 << 20) + b'"}'
        try:
            r = requests.post(self.server.api("/sdapi/v1/txt2img"), data=big, timeout=120)
            self.assertEqual(r.status_code, 413, r.text[:200])
            self.assertIn("--max-body", r.json()["detail"])
        except requests.ConnectionError:
            self.fail("a 50 MB body closed the connection instead of answering 413")
        self.assertEqual(txt2img(self.server, dict(FAST, seed=11)).status_code, 200)

    def test_failed_generation_is_reported_to_its_request_only(self):
        r = txt2img(self.server, dict(FAST, seed=14, override_settings={"sd_model_checkpoint": "broken.safetensors"}))
        self.assertEqual(r.status_code, 500, r.text)
        self.assertEqual(r.json()["error"], "GenerationFailed")
        self.assertIn("broken.safetensors", r.json()["detail"])
        self.assertEqual(txt2img(self.server, dict(FAST, seed=15)).status_code, 200)

    def test_client_disconnect_cancels_its_job(self):
        s = self.server
        wait_idle(s)
        body = json.dumps(dict(FAST, seed=12, steps=400)).encode()
        sock = socket.create_connection(("127.0.0.1", s.port))
        sock.sendall(b"POST /sdapi/v1/txt2img HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        t0 = time.time()
        while requests.get(s.api("/sdapi/v1/progress")).json()["state"]["sampling_step"] < 1:
            self.assertLess(time.time() - t0, 120)
            time.sleep(0.05)
        sock.close()
        wait_idle(s, timeout=30)  # cancelled after its current step, not after 400
        self.assertLess(time.time() - t0, 100)
        closed = [l for l in s.log_lines() if l.get("status") == 499]
        self.assertTrue(closed, "no 499 line in the log")
        self.assertEqual(closed[-1]["outcome"], "client_closed")
        self.assertEqual(txt2img(s, dict(FAST, seed=13)).status_code, 200)


class ServeAuth(unittest.TestCase):
    def test_api_key(self):
        s = Server(SDGEN, WORKDIR, "auth", "--api-key", "s3cret")
        try:
            self.assertEqual(requests.get(s.api("/internal/ping")).status_code, 200)  # health checks need no key
            self.assertEqual(requests.get(s.api("/sdapi/v1/options")).status_code, 401)
            wrong = requests.get(s.api("/sdapi/v1/options"), headers={"Authorization": "Bearer nope"})
            self.assertEqual(wrong.status_code, 401)
            ok = requests.get(s.api("/sdapi/v1/options"), headers={"Authorization": "Bearer s3cret"})
            self.assertEqual(ok.status_code, 200)
        finally:
            self.assertEqual(s.stop(), 0)


class ServeLoad(unittest.TestCase):
    """32 concurrent clients over a queue of 8: each gets an image or a 429, none lost or duplicated; then the
    same with two engines on one device, which must both serve and give the same images."""

    def check_burst(self, server, seeds, results):
        ok = {seed: r for seed, r in results.items() if not isinstance(r, Exception) and r.status_code == 200}
        full = [seed for seed, r in results.items() if not isinstance(r, Exception) and r.status_code == 429]
        lost = [seed for seed, r in results.items() if isinstance(r, Exception) or r.status_code not in (200, 429)]
        self.assertEqual(lost, [], "requests neither served nor refused")
        self.assertEqual(len(ok) + len(full), len(seeds))
        self.assertGreaterEqual(len(ok), 8)  # the queue's 8 at least
        self.assertGreater(len(full), 0, "32 requests at once must overflow a queue of 8")
        for seed in full:
            self.assertEqual(results[seed].json()["error"], "QueueFull")
        for seed, r in ok.items():
            self.assertEqual(info(r)["all_seeds"], [seed])
        jobs = [info(r)["sdgen_job"] for r in ok.values()]
        self.assertEqual(len(set(jobs)), len(jobs), "a job served twice")
        served = server.request_lines("/sdapi/v1/txt2img", jobs)
        self.assertEqual(sorted(l["job"] for l in served if l["job"] in jobs), sorted(jobs))
        return ok

    def test_queue_of_8_then_two_engines(self):
        seeds = list(range(1000, 1032))
        one = Server(SDGEN, WORKDIR, "load1", "--queue", "8")
        try:
            self.assertEqual(txt2img(one, dict(FAST, seed=1)).status_code, 200)
            ok1 = self.check_burst(one, seeds, burst(one, seeds))
            rss1 = one.rss_kib()
            ok1b = self.check_burst(one, seeds, burst(one, seeds))
            rss2 = one.rss_kib()
            # Flat memory: a second identical burst leaves the server about where the first did.
            self.assertLess(rss2 - rss1, 32 * 1024, f"RSS grew from {rss1} to {rss2} KiB")
        finally:
            self.assertEqual(one.stop(), 0)
        single = {seed: pngs(r)[0] for seed, r in {**ok1, **ok1b}.items()}

        two = Server(SDGEN, WORKDIR, "load2", "--queue", "8", "--devices", "0,0")
        try:
            self.assertEqual(txt2img(two, dict(FAST, seed=1)).status_code, 200)
            ok2 = self.check_burst(two, seeds, burst(two, seeds))
            engines = {info(r)["sdgen_engine"] for r in ok2.values()}
            self.assertEqual(engines, {0, 1}, "both engines must serve")
            jobs2 = [info(r)["sdgen_job"] for r in ok2.values()]
            logged = {l["engine"] for l in two.request_lines("/sdapi/v1/txt2img", jobs2)}
            self.assertEqual(logged, {0, 1})
            common = [seed for seed in ok2 if seed in single]
            self.assertTrue(common)
            for seed in common:
                self.assertEqual(pngs(ok2[seed])[0], single[seed], f"seed {seed}: engines disagree")
        finally:
            self.assertEqual(two.stop(), 0)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[4:], verbosity=2)
