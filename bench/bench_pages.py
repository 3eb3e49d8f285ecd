"""Question-page latency under concurrent load, next to a trivial view, in one run.

Sets up a throwaway embedded instance (SQLite in a temp dir, the bank synced), serves it
with gunicorn, and drives it from a second process (the load generator) over loopback
with keep-alive connections: first `/ping` (the baseline: routing and a JSON response),
then a logged-in candidate's question page. Prints median, p99, throughput, the ratio of
each figure to the baseline's measured in the same run, the machine's load average
before and after (the machine is shared: compare ratios, not raw figures, across runs)
and the issue's targets (median at most 3x /ping, p99 under 50 ms).

    .venv/bin/python bench/bench_pages.py [--seconds 10] [--concurrency 8] [--slug SLUG]
"""

import argparse
import http.client
import multiprocessing
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _percentile(samples, fraction):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _login_cookie(port: int) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.request("GET", "/accounts/login/")
    response = conn.getresponse()
    body = response.read().decode()
    csrf_cookie = re.search(r"csrftoken=([^;]+)", response.getheader("Set-Cookie")).group(1)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', body).group(1)
    form = f"csrfmiddlewaretoken={token}&username=candidate&password=candidate-demo-pass"
    conn.request("POST", "/accounts/login/", body=form, headers={
        "Content-Type": "application/x-www-form-urlencoded", "Cookie": f"csrftoken={csrf_cookie}",
        "Referer": f"http://127.0.0.1:{port}/accounts/login/",
    })
    response = conn.getresponse()
    response.read()
    session = re.search(r"sessionid=([^;]+)", response.getheader("Set-Cookie") or "")
    if not session:
        raise SystemExit("login failed: no session cookie")
    return f"sessionid={session.group(1)}; csrftoken={csrf_cookie}"


def _load(port, path, cookie, seconds, concurrency, queue):
    """Runs in the load-generator process: `concurrency` keep-alive clients for `seconds`."""
    latencies, errors = [], []
    stop_at = time.monotonic() + seconds

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        while time.monotonic() < stop_at:
            started = time.perf_counter()
            conn.request("GET", path, headers={"Cookie": cookie})
            response = conn.getresponse()
            response.read()
            elapsed = time.perf_counter() - started
            (latencies if response.status == 200 else errors).append(elapsed)

    threads = [threading.Thread(target=client) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    queue.put((latencies, len(errors)))


def measure(port, path, cookie, seconds, concurrency):
    queue = multiprocessing.Queue()
    process = multiprocessing.Process(target=_load, args=(port, path, cookie, seconds, concurrency, queue))
    process.start()
    latencies, errors = queue.get()
    process.join()
    if errors or not latencies:
        raise SystemExit(f"{path}: {errors} non-200 responses")
    return {
        "n": len(latencies),
        "median_ms": statistics.median(latencies) * 1000,
        "p99_ms": _percentile(latencies, 0.99) * 1000,
        "rps": len(latencies) / seconds,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--slug", default=None, help="question to load (default: the first in the bank)")
    args = parser.parse_args()

    var_dir = tempfile.mkdtemp(prefix="bench-pages-")
    env = dict(os.environ, TRAINER_VAR_DIR=var_dir, DEBUG="0", SECRET_KEY="bench-only-secret-key",
               SECURE_COOKIES="0", STATIC_ROOT=f"{var_dir}/static", DATABASE_URL=f"sqlite:///{var_dir}/bench.sqlite3")
    for command in (["migrate", "--noinput"], ["collectstatic", "--noinput"], ["sync_questions"],
                    ["create_demo_accounts"]):
        subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env, check=True, capture_output=True)
    slug = args.slug or subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c",
         "from questions.models import Question; print(Question.objects.order_by('seed_number').first().slug)"],
        cwd=ROOT, env=env, check=True, capture_output=True, text=True,
    ).stdout.strip().splitlines()[-1]

    port = 18000 + os.getpid() % 1000
    server = subprocess.Popen(
        [str(BIN / "gunicorn"), "trainer.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--workers", str(args.workers)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                http.client.HTTPConnection("127.0.0.1", port, timeout=1).request("GET", "/ping")
                break
            except OSError:
                time.sleep(0.1)
        cookie = _login_cookie(port)
        load_before = os.getloadavg()[0]
        measure(port, f"/questions/{slug}/", cookie, 1, 2)  # warm-up: imports, catalogue, templates
        baseline = measure(port, "/ping", cookie, args.seconds, args.concurrency)
        page = measure(port, f"/questions/{slug}/", cookie, args.seconds, args.concurrency)
        load_after = os.getloadavg()[0]
    finally:
        server.terminate()
        server.wait()

    print(f"gunicorn workers={args.workers}, load: {args.concurrency} keep-alive clients x {args.seconds:.0f} s "
          f"from a second process; 1-minute load average {load_before:.1f} before, {load_after:.1f} after "
          f"({os.cpu_count()} CPUs)")
    print(f"{'view':<34}{'requests':>9}{'median ms':>11}{'p99 ms':>9}{'req/s':>8}")
    for name, row in (("/ping (baseline)", baseline), (f"/questions/{slug}/", page)):
        print(f"{name:<34}{row['n']:>9}{row['median_ms']:>11.2f}{row['p99_ms']:>9.2f}{row['rps']:>8.0f}")
    median_ratio = page["median_ms"] / baseline["median_ms"]
    print(f"question page / baseline: median x{median_ratio:.1f}, "
          f"p99 x{page['p99_ms'] / baseline['p99_ms']:.1f}, throughput x{page['rps'] / baseline['rps']:.2f}")
    print(f"targets: median at most x3 of /ping: {'met' if median_ratio <= 3 else 'not met'} (x{median_ratio:.1f}); "
          f"p99 under 50 ms: {'met' if page['p99_ms'] < 50 else 'not met'} ({page['p99_ms']:.1f} ms)")


if __name__ == "__main__":
    main()
