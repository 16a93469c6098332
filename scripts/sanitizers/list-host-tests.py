#!/usr/bin/env python3
"""Writes scripts/sanitizers/host-tests.txt: per test binary, the GoogleTest suites that pass with no Vulkan driver
at all (VK_ICD_FILENAMES pointing nowhere), i.e. the host-side tests the CI sanitizer stage runs under ASan+UBSan
(scripts/test-sanitize.sh --host; docs/reliability.md). Run from the repository root after a default build:
  python3 scripts/sanitizers/list-host-tests.py [BUILD_DIR]
A suite is listed only if every one of its tests passed (none failed or skipped).
It also writes scripts/sanitizers/device-only-tests.cmake: the test sources of those binaries that define no test of
a listed suite, which the sanitizer stage's build leaves out (-DSDGEN_HOST_TESTS_ONLY=ON; it runs only the listed
suites, and checks that each of them is in its binary). `--sources-only` rewrites that file from host-tests.txt
without running anything."""
import os
import re
import pathlib
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

BINARIES = ["tests/models/models_tests", "tests/app/app_tests", "tests/graph_tests", "tests/serve/serve_tests"]
# Where each binary's test sources live (tests/CMakeLists.txt and the per-directory CMakeLists).
SOURCES = {"models_tests": ["tests/models/*.cpp"], "app_tests": ["tests/app/*.cpp"],
           "graph_tests": ["tests/graph/*.cpp"], "serve_tests": ["tests/serve/*.cpp"]}


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


def write_device_only_sources():
    host = {}
    for line in pathlib.Path("scripts/sanitizers/host-tests.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            binary, suites = line.split(maxsplit=1)
            host[binary] = {s.removesuffix(".*").split("/")[-1] for s in suites.split(":")}
    device_only = []
    for binary, patterns in SOURCES.items():
        for pattern in patterns:
            for f in sorted(pathlib.Path(".").glob(pattern)):
                suites = set(re.findall(r"^\s*(?:TEST|TEST_F|TEST_P|TYPED_TEST)\(\s*(\w+)", f.read_text(), re.M))
                if suites and not suites & host.get(binary, set()):
                    device_only.append(f.as_posix())
    lines = ["# Test sources that define no host-side suite of scripts/sanitizers/host-tests.txt (written with it by",
             "# scripts/sanitizers/list-host-tests.py): the sanitizer stage's build (-DSDGEN_HOST_TESTS_ONLY=ON) leaves",
             "# them out. Paths are relative to the repository root.",
             "set(SDGEN_DEVICE_ONLY_TEST_SOURCES"] + [f"  {f}" for f in device_only] + [")"]
    pathlib.Path("scripts/sanitizers/device-only-tests.cmake").write_text("\n".join(lines) + "\n")
    print(f"device-only test sources: {len(device_only)}", file=sys.stderr)


def main():
    if sys.argv[1:] == ["--sources-only"]:
        write_device_only_sources()
        return
    build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build/default")
    lines = ["# GoogleTest suites that need no Vulkan driver (scripts/sanitizers/list-host-tests.py writes this file).",
             "# scripts/test-sanitize.sh --host runs them under ASan+UBSan with no driver: one that starts using the",
             "# device fails there, and this list is written again."]
    for b in BINARIES:
        suites = host_suites(str(build / b))
        lines.append(f"{pathlib.Path(b).name} " + ":".join(f"{s}.*" for s in suites))
        print(f"{b}: {len(suites)} suites", file=sys.stderr)
    pathlib.Path("scripts/sanitizers/host-tests.txt").write_text("\n".join(lines) + "\n")
    write_device_only_sources()


if __name__ == "__main__":
    main()
