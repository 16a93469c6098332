"""Starting `sdgen serve` for the API tests: a server on a free loopback port, its stderr (one JSON log line per
request) collected in a file, stopped with SIGTERM and checked to exit cleanly."""
import json
import os
import re
import signal
import subprocess
import time

import requests


class Server:
    def __init__(self, sdgen, workdir, name, *args, timeout=120):
        self.log_path = os.path.join(workdir, name + ".log")
        self.out_path = os.path.join(workdir, name + ".out")
        self._log = open(self.log_path, "wb")
        self._out = open(self.out_path, "wb")
        self.proc = subprocess.Popen([sdgen, "serve", "--port", "0", *args], stdout=self._out, stderr=self._log)
        deadline = time.time() + timeout
        self.port = None
        while time.time() < deadline and self.port is None:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sdgen serve exited with {self.proc.returncode}: {self.log()}")
            with open(self.out_path, "rb") as f:
                m = re.search(rb"listening on http://[^:]+:(\d+)", f.read())
            if m:
                self.port = int(m.group(1))
            else:
                time.sleep(0.1)
        if self.port is None:
            self.stop()
            raise RuntimeError("sdgen serve did not start: " + self.log())
        self.url = f"http://127.0.0.1:{self.port}"

    def api(self, path):
        return self.url + path

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def log_lines(self):
        lines = []
        for line in self.log().splitlines():
            try:
                lines.append(json.loads(line))
            except ValueError:
                pass  # not a request line (e.g. a warning)
        return lines

    def request_lines(self, path, jobs, timeout=10.0):
        """The log lines of requests to `path` with an answer of 200, once those of every job in `jobs` are there.
        The server logs a request just after its response goes out, so the line can trail the client's answer
        by a moment: this waits for it (bounded), then returns what the log has."""
        deadline = time.monotonic() + timeout
        while True:
            lines = [l for l in self.log_lines() if l.get("path") == path and l.get("status") == 200]
            if set(jobs) <= {l.get("job") for l in lines} or time.monotonic() > deadline:
                return lines
            time.sleep(0.05)

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        """SIGTERM; the server must stop by itself with exit code 0."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise
        self._log.close()
        self._out.close()
        return self.proc.returncode


def wait_idle(server, timeout=60):
    """Until no engine runs a job and the queue is empty."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        s = requests.get(server.api("/sdapi/v1/progress"), timeout=10).json()["sdgen"]
        if s["queued"] == 0 and all(e["job"] is None for e in s["engines"]):
            return
        time.sleep(0.1)
    raise AssertionError("the server did not become idle")
