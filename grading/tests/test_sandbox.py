"""run_python's contract: what goes in, what comes back, and how each status arises.

Hostile programs are in test_sandbox_hostile.py. These need scripts/setup-sandbox
(bubblewrap, the sandbox Python env, slot users, cgroups) and root; without them they
skip, saying what is missing.
"""

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from grading.sandbox import Limits, SandboxResult, Status, run_python, sandbox_available, slots
from grading.sandbox import pool as warm_pool
from grading.sandbox.interpreter import _classify

AVAILABLE, WHY_NOT = sandbox_available()
pytestmark = [pytest.mark.sandbox, pytest.mark.skipif(not AVAILABLE, reason=WHY_NOT)]

QUICK = Limits(cpu_seconds=5, wall_seconds=20)


def run(source: str, *, warm: bool = False, limits: Limits = QUICK, **files: bytes) -> SandboxResult:
    return run_python(files={"main.py": source.encode(), **files}, entry="main.py",
                      limits=limits, warm=warm)


def test_prints_args_and_runs_in_the_input_directory():
    result = run_python(
        files={"main.py": b"import os, sys\nprint(sys.argv[1:], os.getcwd(), os.getuid())\n"},
        entry="main.py", args=("one", "two"), limits=QUICK, warm=False)
    assert result.status == "ok" and result.status is Status.OK
    assert result.exit_code == 0 and result.signal is None
    assert result.stdout == "['one', 'two'] /sandbox/in 1000\n"
    assert result.note == ""


def test_nonzero_exit_is_exited_with_its_code():
    result = run("import sys\nprint('bye', file=sys.stderr)\nsys.exit(3)\n")
    assert (result.status, result.exit_code, result.signal) == (Status.EXITED, 3, None)
    assert result.stderr == "bye\n"
    assert "exit code 3" in result.note


def test_uncaught_exception_shows_the_solution_traceback_only():
    result = run("def f():\n    raise ValueError('boom')\nf()\n")
    assert (result.status, result.exit_code) == (Status.EXITED, 1)
    assert 'File "/sandbox/in/main.py", line 2, in f' in result.stderr
    assert "ValueError: boom" in result.stderr
    assert "runpy" not in result.stderr and "<string>" not in result.stderr


def test_input_files_are_readable_and_read_only():
    source = (
        "import helpers.util as u\n"
        "print(open('data.txt').read(), u.VALUE)\n"
        "try:\n    open('data.txt', 'w')\nexcept OSError as e:\n    print(type(e).__name__)\n"
    )
    result = run_python(files={"main.py": source.encode(), "data.txt": b"payload",
                               "helpers/util.py": b"VALUE = 42\n"},
                        entry="main.py", limits=QUICK, warm=False)
    assert result.status == Status.OK, result.stderr
    assert result.stdout.split() == ["payload", "42", "OSError"]


def test_out_files_come_back_nested_and_exact():
    source = (
        "import os\n"
        "os.makedirs('/sandbox/out/sub')\n"
        "open('/sandbox/out/a.bin', 'wb').write(bytes(range(256)))\n"
        "open('/sandbox/out/sub/b.txt', 'w').write('nested')\n"
    )
    result = run(source)
    assert result.status == Status.OK, result.stderr
    assert result.files == {"a.bin": bytes(range(256)), "sub/b.txt": b"nested"}


def test_numpy_and_torch_work_in_a_cold_interpreter():
    source = (
        "import numpy as np, torch\n"
        "x = torch.arange(6.0).reshape(2, 3)\n"
        "np.save('/sandbox/out/r.npy', (x @ x.T).numpy())\n"
        "print(torch.__version__.split('+')[0], np.__version__)\n"
    )
    result = run(source, limits=Limits(wall_seconds=60, cpu_seconds=30))
    assert result.status == Status.OK, result.stderr
    assert result.stdout.split() == ["2.13.0", "2.4.6"]
    assert result.files["r.npy"].startswith(b"\x93NUMPY")


def test_stdout_past_the_cap_is_output_limit_and_truncated():
    limits = Limits(max_output_bytes=1000, wall_seconds=20)
    result = run("import sys\nfor _ in range(100):\n    sys.stdout.write('x' * 100)\n"
                 "sys.stdout.flush()\nimport time\ntime.sleep(30)\n", limits=limits)
    assert result.status == Status.OUTPUT_LIMIT
    assert result.stdout == "x" * 1000
    assert "stdout went past 1000 bytes" in result.note
    assert result.wall_seconds < 10  # killed at once, not at the wall clock


def test_output_is_decoded_with_replacement():
    result = run("import sys\nsys.stdout.buffer.write(b'ok\\xff')\n")
    assert result.stdout == "ok\ufffd"


@pytest.mark.parametrize("name", ["../x.py", "/abs.py", "a/../b.py", "", "a//b.py", "nul\0.py"])
def test_unsafe_file_names_are_refused(name):
    with pytest.raises(ValueError):
        run_python(files={name: b""}, entry=name)


def test_a_file_cannot_also_be_a_directory():
    with pytest.raises(ValueError):
        run_python(files={"a": b"", "a/b.py": b""}, entry="a/b.py")


def test_entry_must_be_one_of_the_files():
    with pytest.raises(ValueError):
        run_python(files={"a.py": b""}, entry="b.py")


def test_limits_must_be_positive():
    with pytest.raises(ValueError):
        Limits(cpu_seconds=0)


def test_concurrent_runs_never_share_a_slot(monkeypatch):
    leased: list[slots.Slot] = []
    acquire = slots.acquire

    def recording_acquire(*args, **kwargs):
        leased.append(acquire(*args, **kwargs))
        return leased[-1]

    monkeypatch.setattr(slots, "acquire", recording_acquire)
    source = "import time\ntime.sleep(1)\nprint('done')\n"
    with ThreadPoolExecutor(3) as executor:
        results = list(executor.map(lambda _: run(source), range(3)))
    assert [r.stdout for r in results] == ["done\n"] * 3
    assert len({slot.uid for slot in leased}) == 3


@pytest.fixture(scope="module")
def pool():
    """A ready warm pool in this process (closed at the end, so other modules start clean)."""
    warm = warm_pool.get_pool()
    assert warm is not None
    assert warm.wait_ready(1, timeout=120), "no warm interpreter came up in 2 minutes"
    yield warm
    warm_pool.shutdown()


def test_warm_interpreter_has_torch_imported_already(pool):
    assert pool.wait_ready(1, timeout=120)
    result = run("import sys\nprint('torch' in sys.modules)\nimport torch\nprint(torch.ones(2).sum().item())\n",
                 warm=True)
    assert result.status == Status.OK, result.stderr
    assert result.stdout.split() == ["True", "2.0"]


def test_nothing_of_one_warm_run_reaches_the_next(pool):
    plant = (
        "import torch, os, sys\n"
        "torch.planted = 'secret'\n"
        "open('/tmp/planted', 'w').write('secret')\n"
        "open('/sandbox/out/planted', 'w').write('secret')\n"
        "print(os.getpid())\n"
    )
    look = (
        "import torch, os, sys\n"
        "print(hasattr(torch, 'planted'), os.path.exists('/tmp/planted'),\n"
        "      os.listdir('/sandbox/out'), 'torch' in sys.modules)\n"
    )
    assert pool.wait_ready(1, timeout=120)
    first = run(plant, warm=True)
    assert first.status == Status.OK, first.stderr
    assert pool.wait_ready(1, timeout=120)
    second = run(look, warm=True)
    assert second.status == Status.OK, second.stderr
    assert second.stdout.split() == ["False", "False", "[]", "True"]
    assert second.files == {}


def test_warm_runs_honour_the_jobs_limits(pool):
    assert pool.wait_ready(1, timeout=120)
    result = run("while True:\n    pass\n", warm=True,
                 limits=Limits(cpu_seconds=1, wall_seconds=10))
    assert result.status == Status.TIME_LIMIT
    assert result.cpu_seconds < 3


def test_pool_after_fork_is_not_shared(pool):
    """A Celery prefork child must not use the parent's interpreters."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        os.write(write_end, b"1" if warm_pool._pool is None else b"0")
        os._exit(0)
    os.waitpid(child, 0)
    assert os.read(read_end, 1) == b"1"
    os.close(read_end)
    os.close(write_end)


@pytest.mark.parametrize(("returncode", "oom", "expected"), [
    (0, False, Status.OK),
    (2, False, Status.EXITED),
    (128 + 31, False, Status.REJECTED),          # SIGSYS from seccomp
    (128 + 24, False, Status.TIME_LIMIT),        # SIGXCPU from RLIMIT_CPU
    (128 + 9, True, Status.MEMORY_LIMIT),        # the OOM killer
    (128 + 11, False, Status.KILLED),            # SIGSEGV
    (-9, False, Status.KILLED),                  # bwrap itself killed
])
def test_exit_statuses_are_classified(returncode, oom, expected):
    status, *_ = _classify(returncode, None, oom, 0.1, Limits())
    assert status == expected

