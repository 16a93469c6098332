"""bench/serve_bench.py on lavapipe with the built-in model at a tiny size: the script the H100 runs
(scripts/device/serve-bench.sh) starts its servers, drives them at every queue depth, and writes its JSON, with
--devices 0 and 0,0 (two engines on one device, both serving).

Usage: serve_bench_test.py SDGEN WORKDIR"""
import json
import os
import pathlib
import subprocess
import sys
import unittest

SDGEN, WORKDIR = sys.argv[1:3]
BENCH = pathlib.Path(__file__).resolve().parent.parent.parent / "bench" / "serve_bench.py"


class ServeBench(unittest.TestCase):
    def test_bench_runs_and_reports(self):
        out = os.path.join(WORKDIR, "bench.json")
        if os.path.exists(out):
            os.remove(out)
        p = subprocess.run([sys.executable, str(BENCH), "--sdgen", SDGEN, "--model", "builtin", "--size", "32",
                            "--steps", "1", "--requests", "2", "--depths", "1,2", "--devices-list", "0;0,0",
                            "--work", WORKDIR, "--out", out], capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-2000:])
        with open(out) as f:
            r = json.load(f)
        for key in ("device", "date", "images_per_s_1gpu", "images_per_s_2gpu", "p50_ms_1gpu", "p50_ms_2gpu",
                    "requests", "errors"):
            self.assertIn(key, r)
        self.assertEqual((r["devices_1gpu"], r["devices_2gpu"], r["requests"], r["errors"]), ("0", "0,0", 2, 0))
        self.assertIn("llvmpipe", r["device"])
        for c in r["configs"]:
            self.assertEqual([d["depth"] for d in c["depths"]], [1, 2])
            for d in c["depths"]:
                self.assertEqual((d["images"], d["errors"]), (2, 0))
                self.assertGreater(d["images_per_s"], 0)
                self.assertGreaterEqual(d["p90_ms"], d["p50_ms"])
        self.assertEqual(r["images_per_s_1gpu"], r["configs"][0]["depths"][1]["images_per_s"])
        self.assertEqual(r["p50_ms_2gpu"], r["configs"][1]["depths"][0]["p50_ms"])
        # Device memory per engine from the server's log (lavapipe has no VK_EXT_memory_budget: its figure is 0,
        # sdgen's own blocks are not) and nvidia-smi's per GPU (none here).
        self.assertEqual(sorted(r["process_device_peak_mib_2gpu"]), ["0", "1"])
        for key in ("1gpu", "2gpu"):
            for engine in r[f"process_device_peak_mib_{key}"].values():
                self.assertGreater(engine["blocks_peak_mib"], 0)
            self.assertEqual(r[f"nvidia_smi_peak_mib_{key}"], {})
        # The two-engine server: its request log says both engines served.
        with open(os.path.join(WORKDIR, "serve-0-0.log")) as f:
            lines = [json.loads(l) for l in f if l.startswith("{")]
        engines = {l["engine"] for l in lines if l.get("path") == "/sdapi/v1/txt2img" and l.get("status") == 200}
        self.assertEqual(engines, {0, 1})


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]], verbosity=2)
