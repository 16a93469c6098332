#!/usr/bin/env python3
"""Writes scripts/sanitizers/host-tests.txt: per test binary, the GoogleTest suites that pass with no Vulkan driver
at all (VK_ICD_FILENAMES pointing nowhere), i.e. the host-side tests the CI sanitizer stage runs under ASan+UBSan
(scripts/test-sanitize.sh --host; docs/reliability.md). Run from the repository root after a default build:
  python3 scripts/sanitizers/list-host-tests.py [BUILD_DIR]
A suite is listed only if every one of its tests passed (none failed or skipped)."""
import os
import pathlib
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

BINARIES = ["tests/models/models_tests", "tests/app/app_tests", "tests/graph_tests", "tests/serve/serve_tests"]


def host_suites(binary):
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, VK_ICD_FILENAMES="/nonexistent-icd.json", VK_DRIVER_FILES="/nonexistent-icd.json",
                   SDGEN_CACHE_DIR=os.path.join(tmp, "cache"))
        xml = os.path.join(tmp, "out.xml")
        subprocess.run([binary, f"--gtest_output=xml:{xml}"], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=1800)
        suites = []
        for s in ET.parse(xml).getroot().iter("testsuite"):
            cases = list(s.iter("testcase"))
            bad = [c for c in cases if c.find("failure") is not None or c.find("skipped") is not None
                   or c.get("result") == "skipped"]
            if cases and not bad:
                suites.append(s.get("name"))
        return suites


def main():
    build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build/default")
    lines = ["# GoogleTest suites that need no Vulkan driver (scripts/sanitizers/list-host-tests.py writes this file).",
             "# scripts/test-sanitize.sh --host runs them under ASan+UBSan with no driver: one that starts using the",
             "# device fails there, and this list is written again."]
    for b in BINARIES:
        suites = host_suites(str(build / b))
        lines.append(f"{pathlib.Path(b).name} " + ":".join(f"{s}.*" for s in suites))
        print(f"{b}: {len(suites)} suites", file=sys.stderr)
    pathlib.Path("scripts/sanitizers/host-tests.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
