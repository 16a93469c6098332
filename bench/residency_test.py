#!/usr/bin/env python3
"""The GPU-free parts of bench/residency.py: arguments, parsing `sdgen -v`, the results file (ctest
bench_residency_script). The sample is real `sdgen -v` output of the built-in model on lavapipe."""
import json
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import residency  # noqa: E402

SAMPLE = """timings:
  model load          1129.6 ms
  kernel compile      1388.7 ms
  text encode          135.6 ms
  denoise             1678.8 ms  (1 steps, median 1678.8 ms/step)
  decode              3066.6 ms
memory (MiB):
  text encoder    weights      12.8   arena      0.2   loaded in 128.1 ms
  UNet            weights      78.6   arena      2.7   loaded in 745.6 ms
  VAE decoder     weights      10.9   arena      2.0   loaded in 91.6 ms
  total           weights     102.3   arena      4.9   conv scratch 6.1
  weight stream   81.7 MiB in 4 batches, 590.2 ms (reading files 90.2 ms)
  peak            256.0 (sdgen's device memory blocks; no VK_EXT_memory_budget)
"""
GPU_PEAK = "  peak            2411.5 (process, VK_EXT_memory_budget); sdgen's blocks 2304.0\n"


class Residency(unittest.TestCase):
    def test_arguments(self):
        a = residency.parse_args(["--out", "/tmp/x/r.json"])
        self.assertEqual((a.runs, a.steps, a.size), (3, 20, 512))
        self.assertEqual(a.details, pathlib.Path("/tmp/x/r-details.json"))
        for bad in (["--out", "r.json", "--runs", "0"], ["--out", "r.json", "--size", "500"], []):
            with self.assertRaises(SystemExit):
                residency.parse_args(bad)

    def test_parses_sdgen_verbose(self):
        r = residency.parse_sdgen_verbose(SAMPLE)
        self.assertEqual(r["load_ms"], 1129.6)
        self.assertEqual(r["compile_ms"], 1388.7)
        self.assertEqual(r["weights_mib"], {"text encoder": 12.8, "UNet": 78.6, "VAE decoder": 10.9})
        self.assertEqual((r["peak_mib"], r["peak_source"]), (256.0, "sdgen"))
        gpu = residency.parse_sdgen_verbose(SAMPLE.replace(SAMPLE.splitlines()[-1] + "\n", GPU_PEAK))
        self.assertEqual((gpu["peak_mib"], gpu["peak_source"]), (2411.5, "process"))
        self.assertEqual((r["autotune_problems"], r["autotune_s"]), (None, None))  # lavapipe: autotune off
        tuned = residency.parse_sdgen_verbose(
            "conv autotune: 30 problems tuned in 5.60 s (2116 launches), 0 from the cache /tmp/c/conv-tune-v1.json\n"
            + SAMPLE)
        self.assertEqual((tuned["autotune_problems"], tuned["autotune_s"]), (30, 5.6))
        self.assertIsNone(tuned["autotune_compile_s"])  # the older line
        split = residency.parse_sdgen_verbose(
            "conv autotune: 30 problems tuned in 2.10 s (0.75 s of it waiting for candidate kernels, 1600 launches), "
            "0 from the cache /tmp/c/conv-tune-v1.json\n" + SAMPLE)
        self.assertEqual((split["autotune_s"], split["autotune_compile_s"]), (2.1, 0.75))
        with self.assertRaises(ValueError):
            residency.parse_sdgen_verbose(SAMPLE.split("memory")[0])  # run without -v's memory lines

    def test_results_hold_exactly_the_issue_fields(self):
        run = dict(residency.parse_sdgen_verbose(SAMPLE), nvidia_smi_peak_mib=300.0)
        fast = dict(run, load_ms=900.0)
        runs = {"folder": [run, fast, run], "single_file": [fast]}
        diffusers = {"load_s": [3.0, 2.0, 2.5], "peak_mib": 2700.0}
        # cold runs: the median of compile + the load beyond the warm folder load's median (1129.6 ms)
        cold = [{"compile_ms": 7500.0, "load_ms": 1629.6}, {"compile_ms": 9000.0, "load_ms": 1129.6},
                {"compile_ms": 6000.0, "load_ms": 900.0}]
        r = residency.results("NVIDIA H100 80GB HBM3", runs, diffusers, cold, 1969.4)
        self.assertEqual(tuple(r), residency.FIELDS)
        self.assertEqual(r["load_s_folder"], 1.13)
        self.assertEqual(r["load_s_single_file"], 0.9)
        self.assertEqual(r["diffusers_load_s"], 2.5)
        self.assertEqual(r["peak_mib"], 300.0)  # the larger of the process's and nvidia-smi's peaks
        self.assertEqual(r["weights_mib"], 102.3)
        self.assertEqual((r["checkpoint_mib"], r["cold_compile_s"]), (1969.4, 8.0))
        with tempfile.TemporaryDirectory() as d:
            path = pathlib.Path(d) / "sub" / "h100-residency.json"
            residency.write_json(path, r)
            self.assertEqual(json.loads(path.read_text()), r)
        self.assertIsNone(residency.results("x", runs, None, [{"compile_ms": 1.0, "load_ms": 0.0}], 1.0)["diffusers_load_s"])


if __name__ == "__main__":
    unittest.main()
