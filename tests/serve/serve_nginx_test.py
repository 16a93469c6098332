"""nginx (Debian's, scripts/setup.sh) in front of two `sdgen serve` processes on loopback, with the shipped
deploy/nginx/sdgen.conf (only its upstream servers and listen address replaced): requests spread over both
backends (their logs say which served what), one backend killed mid-load, and every request still answered
with an image, the rest by the other backend. nginx runs unprivileged-style from a temporary prefix (-p DIR -c
conf; pid, logs and temp files in DIR), in the foreground, and is stopped by its pid.

Usage: serve_nginx_test.py SDGEN NGINX_CONF WORKDIR [unittest args]"""
import concurrent.futures
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

import requests

from serve_support import Server

SDGEN, NGINX_CONF, WORKDIR = sys.argv[1:4]
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def served(server):
    """Seeds of the txt2img requests this backend answered with an image, from its request log."""
    return sorted(l["seed"] for l in server.log_lines() if l.get("path") == "/sdapi/v1/txt2img" and l.get("status") == 200)


def served_by(servers, seeds, timeout=10):
    """{server: seeds among `seeds` it served}, once every seed shows in some log: a log line is written just
    after its response goes out, so it may trail the client's answer by a moment."""
    deadline = time.time() + timeout
    while True:
        found = {s: [x for x in served(s) if x in seeds] for s in servers}
        if sorted(sum(found.values(), [])) == sorted(seeds) or time.time() > deadline:
            return found
        time.sleep(0.05)


class Nginx:
    def __init__(self, backends):
        self.dir = tempfile.mkdtemp(prefix="sdgen-nginx-", dir=WORKDIR)
        with open(NGINX_CONF) as f:
            conf = f.read()
        # The shipped file's two example hosts become the test's backends; its listen address a free port.
        lines = [f"    server 127.0.0.1:{b.port} max_fails=2 fail_timeout=10s;" for b in backends]
        conf, n = re.subn(r"(?m)^    server 127\.0\.0\.1:786[01] .*\n", "", conf)
        assert n == 2, "deploy/nginx/sdgen.conf no longer lists the two example hosts this test replaces"
        conf = conf.replace("    least_conn;\n", "    least_conn;\n" + "\n".join(lines) + "\n", 1)
        self.port = free_port()
        conf, n = re.subn(r"listen 127\.0\.0\.1:8080;", f"listen 127.0.0.1:{self.port};", conf)
        assert n == 1
        with open(os.path.join(self.dir, "sdgen.conf"), "w") as f:
            f.write(conf)
        d = self.dir
        temps = "\n".join(f"    {k}_temp_path {d}/{k};" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        with open(os.path.join(d, "nginx.conf"), "w") as f:
            f.write(f"""daemon off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log info;
events {{ worker_connections 256; }}
http {{
    access_log {d}/access.log;
{temps}
    include {d}/sdgen.conf;
}}
""")
        if os.geteuid() == 0:  # as root, nginx's workers run as nobody: they must reach the temp folders
            os.chmod(d, 0o755)
            for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
                os.makedirs(os.path.join(d, k), mode=0o777, exist_ok=True)
                os.chmod(os.path.join(d, k), 0o777)
        self.proc = subprocess.Popen([NGINX, "-p", d, "-c", os.path.join(d, "nginx.conf")],
                                     stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, "stderr"), "wb"))
        deadline = time.time() + 30
        while True:
            try:
                if requests.get(self.url("/internal/ping"), timeout=5).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("nginx did not start: " + self.log("stderr") + self.log("error.log"))
            time.sleep(0.1)

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def log(self, name):
        try:
            with open(os.path.join(self.dir, name), errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def stop(self):
        self.proc.send_signal(signal.SIGQUIT)  # graceful: finish the requests in flight, then exit
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.proc.returncode


def txt2img(nginx, seed, steps):
    body = {"prompt": "a red circle", "seed": seed, "steps": steps, "width": 32, "height": 32}
    try:
        return seed, requests.post(nginx.url("/sdapi/v1/txt2img"), json=body, timeout=600)
    except requests.RequestException as e:
        return seed, e


class ServeNginx(unittest.TestCase):
    def test_two_backends_one_killed_mid_load(self):
        a = Server(SDGEN, WORKDIR, "nginx-a", "--queue", "16")
        b = Server(SDGEN, WORKDIR, "nginx-b", "--queue", "16")
        nginx = None
        try:
            nginx = Nginx([a, b])
            # Spread: 4 concurrent requests through nginx; least_conn gives both backends some.
            with concurrent.futures.ThreadPoolExecutor(4) as pool:
                first = dict(pool.map(lambda s: txt2img(nginx, s, 2), range(100, 104)))
            for seed, r in first.items():
                self.assertEqual(getattr(r, "status_code", r), 200, f"seed {seed}: {getattr(r, 'text', r)}")
            got = served_by([a, b], list(range(100, 104)))
            self.assertTrue(got[a] and got[b], f"a served {got[a]}, b served {got[b]}")
            self.assertEqual(sorted(got[a] + got[b]), list(range(100, 104)))  # each once

            # Kill a mid-load: 6 longer requests in flight, a running one of them on a.
            with concurrent.futures.ThreadPoolExecutor(6) as pool:
                futures = [pool.submit(txt2img, nginx, s, 3) for s in range(200, 206)]
                deadline = time.time() + 120
                while requests.get(a.api("/sdapi/v1/progress"), timeout=10).json()["state"]["sampling_step"] < 1:
                    self.assertLess(time.time(), deadline, "backend a never started a job")
                    time.sleep(0.05)
                a.proc.send_signal(signal.SIGKILL)
                a.proc.wait()
                results = dict(f.result() for f in futures)
            for seed, r in results.items():
                self.assertEqual(getattr(r, "status_code", r), 200, f"seed {seed}: {getattr(r, 'text', r)}")
            got = served_by([a, b], list(range(200, 206)))
            by_a, by_b = got[a], got[b]
            # Whatever a had not answered when it died (queued or running) was resent to b.
            self.assertEqual(sorted(by_a + by_b), list(range(200, 206)))
            self.assertLess(len(by_a), 6)
            self.assertIn("127.0.0.1:%d" % a.port, nginx.log("error.log"))  # nginx saw a fail
            # Afterwards every request goes to b.
            _, r = txt2img(nginx, 300, 2)
            self.assertEqual(r.status_code, 200, r.text)
            self.assertEqual(served_by([b], [300])[b], [300])
        finally:
            if nginx:
                self.assertEqual(nginx.stop(), 0)
            a.stop()
            self.assertEqual(b.stop(), 0)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[4:], verbosity=2)
