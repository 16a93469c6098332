"""sdgen serve's cache of loaded models (--model-cache-mb) on the built-in model and the tiny SD 1 and SD 2 test
models (lavapipe in CI): switching A -> B -> A does not load A again, the log says hit or miss for each job, and
with a budget that holds two of the three models the least recently used one is evicted first.

Usage: serve_model_cache_test.py SDGEN WORKDIR TINY_SD1 TINY_SD2 [unittest args]"""
import json
import math
import os
import sys
import unittest

import requests

from serve_support import Server

SDGEN, WORKDIR, TINY_SD1, TINY_SD2 = sys.argv[1:5]
BUILTIN, SD1, SD2 = "sdgen-tiny", "tiny-sd1", "tiny-sd2"


def generate(server, model, seed=1):
    """One small image with `model` (a per-request override, as a fleet selects models); returns the job id."""
    r = requests.post(server.api("/sdapi/v1/txt2img"), timeout=600,
                      json={"prompt": "a red circle", "seed": seed, "steps": 2, "width": 32, "height": 32,
                            "override_settings": {"sd_model_checkpoint": model}})
    assert r.status_code == 200, r.text
    return json.loads(r.json()["info"])["sdgen_job"]


def cache_lines(server):
    """The model_cache log lines of jobs (the warm-up's has job null), by job id."""
    return {l["job"]: l for l in server.log_lines() if l.get("event") == "model_cache" and l["job"] is not None}


def name(path):
    return os.path.basename(os.path.normpath(path))


class ServeModelCache(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.models = os.path.join(WORKDIR, "models")
        os.makedirs(cls.models, exist_ok=True)
        for src, dst in ((TINY_SD1, SD1), (TINY_SD2, SD2)):
            if not os.path.exists(os.path.join(cls.models, dst)):
                os.symlink(os.path.abspath(src), os.path.join(cls.models, dst))

    def test_switch_back_is_a_hit_then_least_recently_used_eviction(self):
        # Default budget (two SD 1.5 models): every model stays.
        s = Server(SDGEN, WORKDIR, "cache-default", "--models-dir", self.models)
        try:
            jobs = [generate(s, m) for m in (SD1, BUILTIN, SD1, SD2)]
            lines = cache_lines(s)
            self.assertEqual([lines[j]["cache"] for j in jobs], ["miss", "hit", "hit", "miss"])
            self.assertTrue(all(lines[j]["evicted"] == [] for j in jobs))
            self.assertEqual(lines[jobs[2]]["load_ms"], 0)
            requests_logged = {l["job"]: l for l in s.request_lines("/sdapi/v1/txt2img", jobs)}
            self.assertEqual(requests_logged[jobs[1]]["model_cache"], "hit")
            self.assertEqual(requests_logged[jobs[3]]["model_cache"], "miss")
            # What each model holds on the device (weights, arenas at 32x32, scratch), from the totals logged.
            warm = [l for l in s.log_lines() if l.get("event") == "model_cache" and l["job"] is None][0]
            sizes = {SD1: lines[jobs[0]]["cached_mib"] - warm["cached_mib"]}
            sizes[BUILTIN] = lines[jobs[1]]["cached_mib"] - sizes[SD1]
            sizes[SD2] = lines[jobs[3]]["cached_mib"] - lines[jobs[2]]["cached_mib"]
        finally:
            self.assertEqual(s.stop(), 0)
        # A budget that holds both tiny models but not the built-in one beside either.
        budget = math.ceil(sizes[SD1] + sizes[SD2]) + 2
        self.assertLess(budget, sizes[BUILTIN] + min(sizes[SD1], sizes[SD2]), sizes)

        s = Server(SDGEN, WORKDIR, "cache-small", "--models-dir", self.models, "--model-cache-mb", str(budget))
        try:
            jobs = [generate(s, m) for m in (SD1, SD2, SD1, BUILTIN)]
            lines = cache_lines(s)
            self.assertEqual([lines[j]["cache"] for j in jobs], ["miss", "miss", "hit", "miss"])
            self.assertEqual([name(p) for p in lines[jobs[0]]["evicted"]], [BUILTIN])  # the warm-up's model
            self.assertEqual(lines[jobs[1]]["evicted"], [])
            self.assertLessEqual(lines[jobs[2]]["cached_mib"], budget)
            self.assertEqual([name(p) for p in lines[jobs[2]]["cached"]], [SD1, SD2])
            # SD2 was loaded after SD1 but used less recently: it goes first, then SD1 once the built-in model's
            # measured size leaves no room beside it.
            self.assertEqual([name(p) for p in lines[jobs[3]]["evicted"]], [SD2, SD1])
            self.assertEqual([name(p) for p in lines[jobs[3]]["cached"]], [BUILTIN])
        finally:
            self.assertEqual(s.stop(), 0)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[5:], verbosity=2)
