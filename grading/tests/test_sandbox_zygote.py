"""The zygote (grading/sandbox/zygote.py): every isolation property of a one-job sandbox
holds for each job it forks, one test per property, and the whole hostile suite
(test_sandbox_hostile.py) passes again with its runs going through a zygote.

Most tests run two jobs on one zygote and check that the second sees nothing of the
first; each would fail if the property were missing (the first job shows that it did
plant what the second must not find).
"""

import os
import signal
import socket
import threading
import time
from pathlib import Path

import pytest

import grading.tests.test_sandbox_hostile as hostile_suite
from grading.sandbox import Limits, SandboxResult, Status, sandbox_available
from grading.sandbox.install import current_install
from grading.sandbox.pool import POOL_CEILINGS, WarmPool
from grading.sandbox.zygote import Zygote
from grading.tests.test_sandbox_hostile import leased  # noqa: F401  (the re-run suite's fixture)

AVAILABLE, WHY_NOT = sandbox_available()
pytestmark = [pytest.mark.sandbox, pytest.mark.skipif(not AVAILABLE, reason=WHY_NOT)]

QUICK = Limits(cpu_seconds=5, wall_seconds=20)
_current: list[Zygote] = []


def live_zygote() -> Zygote:
    """The module's zygote, or a new one if the last job retired it."""
    if not _current or not _current[0].alive():
        if _current:
            _current.pop().destroy()
        zygote = Zygote(current_install(), POOL_CEILINGS)
        try:
            zygote.wait_ready(120)
        except BaseException:
            zygote.destroy()
            raise
        _current.append(zygote)
    return _current[0]


@pytest.fixture(scope="module", autouse=True)
def _destroy_at_end():
    yield
    while _current:
        _current.pop().destroy()


def job(source: str, *, limits: Limits = QUICK, args: tuple[str, ...] = (),
        zygote: Zygote | None = None) -> SandboxResult:
    zygote = zygote or live_zygote()
    return zygote.run({"main.py": source.encode()}, "main.py", args, limits)


def test_consecutive_jobs_get_fresh_empty_directories():
    look_and_plant = (
        "import os\n"
        "print(os.getcwd(), sorted(os.listdir('.')), os.listdir('/sandbox/out'),\n"
        "      os.listdir('/tmp'), os.listdir('/dev/shm'), sorted(os.listdir('/sandbox')))\n"
        "for path in ('/sandbox/out/a', '/tmp/a', '/dev/shm/a'):\n"
        "    open(path, 'w').write('first')\n"
        "os.makedirs('/tmp/deep/er')\n"
    )
    zygote = live_zygote()
    first = job(look_and_plant, zygote=zygote)
    assert first.status == Status.OK, first.stderr
    assert first.files == {"a": b"first"}
    assert zygote.alive(), "a plain job retired its zygote"
    second = job(look_and_plant, zygote=zygote)
    assert second.status == Status.OK, second.stderr
    expected = "/sandbox/in ['main.py'] [] [] [] ['in', 'out']"
    assert first.stdout.strip() == second.stdout.strip() == expected
    assert second.files == {"a": b"first"}  # its own, not the first one's as well


WALK_LIMITS = Limits(cpu_seconds=30, wall_seconds=90)  # the whole filesystem, on a busy machine
WRITABLE_WALK = """
import os, sys
found = []
for top in ('/',):
    for root, dirs, files in os.walk(top):
        if root.startswith(('/proc', '/sys')):
            dirs[:] = []
            continue
        if os.access(root, os.W_OK):
            found.append(root)
"""


def test_a_file_written_anywhere_writable_is_invisible_to_the_next_job():
    plant = WRITABLE_WALK + (
        "written = []\n"
        "for directory in found:\n"
        "    try:\n"
        "        open(os.path.join(directory, 'planted-by-job-1'), 'w').write('secret')\n"
        "        written.append(directory)\n"
        "    except OSError:\n"
        "        pass  # os.access says yes but the filesystem says no (/dev/pts)\n"
        "print(' '.join(written))\n"
    )
    search = (
        "import os\n"
        "hits = []\n"
        "for root, dirs, files in os.walk('/'):\n"
        "    if root.startswith(('/proc', '/sys')):\n        dirs[:] = []\n        continue\n"
        "    hits += [os.path.join(root, f) for f in files if f == 'planted-by-job-1']\n"
        "print(hits)\n"
    )
    zygote = live_zygote()
    first = job(plant, zygote=zygote, limits=WALK_LIMITS)
    assert first.status == Status.OK, first.stderr
    writable = set(first.stdout.split())
    # The walk has teeth: it finds the places a job may write, and there are no others.
    assert writable == {"/tmp", "/dev/shm", "/sandbox/out"}, writable
    second = job(search, zygote=zygote, limits=WALK_LIMITS)
    assert second.status == Status.OK, second.stderr
    assert second.stdout.strip() == "[]"


def test_no_ipc_object_can_outlive_a_job():
    """The zygote's IPC namespace is shared by its jobs: SysV objects and POSIX message
    queues could carry data from one to the next, so none can be made at all."""
    source = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "IPC_CREAT = 0o1000\n"
        "for name, call in (('shm', lambda: libc.shmget(4242, 4096, IPC_CREAT | 0o600)),\n"
        "                   ('sem', lambda: libc.semget(4242, 1, IPC_CREAT | 0o600)),\n"
        "                   ('msg', lambda: libc.msgget(4242, IPC_CREAT | 0o600)),\n"
        "                   ('mq', lambda: libc.mq_open(b'/planted', os.O_CREAT | os.O_RDWR, 0o600, None))):\n"
        "    print(name, call(), ctypes.get_errno())\n"
    )
    result = job(source)
    assert result.status == Status.OK, result.stderr
    lines = dict((line.split()[0], line.split()[1:]) for line in result.stdout.splitlines())
    assert set(lines) == {"shm", "sem", "msg", "mq"}
    for name, (returned, _errno) in lines.items():
        assert returned == "-1", (name, lines)


def test_no_descriptor_thread_or_module_state_reaches_the_next_job():
    pristine = (
        "import os, sys, threading, numpy, torch\n"
        "print(sorted(os.listdir('/proc/self/fd')), len(os.listdir('/proc/self/task')),\n"
        "      hasattr(torch, 'planted'), hasattr(numpy, 'planted'), 'planted' in sys.modules,\n"
        "      'PLANTED' in os.environ, torch.get_default_dtype(), torch.rand(1).item())\n"
        "print(numpy.random.get_state()[1][1])\n"
    )
    plant = (
        "import os, sys, threading, time, types, numpy, torch\n"
        "os.dup2(os.open('/dev/null', os.O_RDONLY), 9)\n"
        "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
        "torch.planted = numpy.planted = 'secret'\n"
        "sys.modules['planted'] = types.ModuleType('planted')\n"
        "os.environ['PLANTED'] = '1'\n"
        "torch.set_default_dtype(torch.float64)\n"
        "torch.manual_seed(1234)\n"
        "numpy.random.seed(42)\n"
        "print(sorted(os.listdir('/proc/self/fd')), len(os.listdir('/proc/self/task')))\n"
        "print(numpy.random.get_state()[1][1])\n"
    )
    zygote = live_zygote()
    before = job(pristine, zygote=zygote)
    planted = job(plant, zygote=zygote)
    after = job(pristine, zygote=zygote)
    assert planted.status == Status.OK, planted.stderr
    assert planted.stdout.splitlines()[0].split("] ")[1] == "2"  # the thread ran
    assert "'9'" in planted.stdout
    assert before.status == after.status == Status.OK, after.stderr
    same, numpy_before = before.stdout.splitlines()
    assert after.stdout.splitlines()[0] == same  # torch's generator too: as in the zygote
    fds, rest = same.split("] ")
    assert fds == "['0', '1', '2', '3'"  # 3: the listing's own descriptor
    assert rest.split()[:6] == ["1", "False", "False", "False", "False", "torch.float32"]
    # numpy's global generator is seeded afresh in each job, not inherited from the last.
    numpy_after = after.stdout.splitlines()[1]
    assert numpy_after not in (planted.stdout.splitlines()[1], numpy_before)


def test_jobs_run_as_the_slot_user_under_their_own_cgroup_limits():
    zygote = live_zygote()
    who = job("import os\nprint(os.getuid(), os.getgid(), os.getppid())\n"
              "print(open('/proc/self/cgroup').read())\n", zygote=zygote)
    assert who.status == Status.OK, who.stderr
    assert who.stdout.split()[:3] == ["1000", "1000", "1"]
    # The cgroup namespace's root is the slot's cgroup: the job is in its child.
    assert ":memory:/job" in who.stdout and ":pids:/job" in who.stdout
    uid_map = Path(f"/proc/{zygote.pid}/uid_map").read_text().split()
    assert uid_map == ["1000", str(zygote.slot.uid), "1"]
    assert zygote.slot.uid != 0

    small = Limits(cpu_seconds=5, wall_seconds=20, memory_bytes=128 << 20, max_processes=4)
    bomb = job("chunks = []\nwhile True:\n    chunks.append(bytearray(8 << 20))\n",
               limits=small, zygote=zygote)
    assert bomb.status == Status.MEMORY_LIMIT, bomb
    assert bomb.peak_memory_bytes <= small.memory_bytes
    forks = job(
        "import os, time\nmade = 0\n"
        "try:\n    while True:\n"
        "        if os.fork() == 0:\n            time.sleep(30)\n            os._exit(0)\n"
        "        made += 1\n"
        "except OSError as e:\n    print(made, e.errno)\n",
        limits=small, zygote=zygote)
    made, errno_value = map(int, forks.stdout.split())
    assert errno_value == 11 and made < small.max_processes
    # A roomier job right after gets the limits it asks for, not the last job's.
    roomy = job("x = bytearray(300 << 20)\nprint(len(x))\n")
    assert roomy.status == Status.OK, roomy.stderr


def test_network_and_writes_to_the_system_fail():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    source = (
        "import socket, sys\n"
        "try:\n    socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=1)\n"
        "    print('CONNECTED')\n"
        "except OSError as e:\n    print('net', e.errno)\n"
        "for path in ('/usr/x', '/etc/x', '/x', '/sandbox/x', '/sandbox/in/x',\n"
        "             '/opt/trainer-sandbox/venv/x'):\n"
        "    try:\n        open(path, 'w')\n        print(path, 'WRITTEN')\n"
        "    except OSError as e:\n        print(path, 'denied')\n"
    )
    try:
        result = job(source, args=(str(listener.getsockname()[1]),))
        listener.settimeout(0)
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()
    assert result.status == Status.OK, result.stderr
    assert result.stdout.startswith("net 1\n")  # EPERM: seccomp
    assert "WRITTEN" not in result.stdout and result.stdout.count("denied") == 6


def test_the_zygote_is_out_of_reach_of_its_jobs():
    zygote = live_zygote()
    source = (
        "import os\n"
        "print('zygote' in open('/proc/1/cmdline').read())\n"
        "for path in ('/proc/1/mem', '/proc/1/environ', '/proc/1/fd', '/proc/1/exe',\n"
        "             '/proc/1/map_files', '/proc/1/root'):\n"
        "    try:\n"
        "        if os.path.isdir(path):\n            print(path, 'LISTED', os.listdir(path))\n"
        "        else:\n            print(path, 'READ', len(open(path, 'rb').read(64)))\n"
        "    except OSError as e:\n        print(path, 'denied')\n"
    )
    looked = job(source, zygote=zygote)
    assert looked.status == Status.OK, looked.stderr
    assert looked.stdout.startswith("True\n")  # it is PID 1 that the job looked at
    assert looked.stdout.count("denied") == 6, looked.stdout
    traced = job("import ctypes\nctypes.CDLL(None).ptrace(16, 1, 0, 0)\nprint('ATTACHED')\n",
                 zygote=zygote)  # PTRACE_ATTACH to the zygote
    assert traced.status == Status.REJECTED and "ATTACHED" not in traced.stdout


def test_a_job_cannot_kill_stop_or_signal_its_zygote():
    zygote = live_zygote()
    source = (
        "import os, signal, time\n"
        "for sig in (signal.SIGKILL, signal.SIGSTOP, signal.SIGTERM, signal.SIGINT,\n"
        "            signal.SIGUSR1, signal.SIGSEGV):\n"
        "    os.kill(1, sig)\n"
        "try:\n    os.kill(-1, signal.SIGKILL)\n"
        "except ProcessLookupError:\n    pass  # nobody it may signal: the zygote is not one\n"
        "time.sleep(0.2)\n"
        "print('still here')\n"
    )
    result = job(source, zygote=zygote)
    assert result.status == Status.OK and result.stdout == "still here\n", result
    assert zygote.alive(), "the zygote was retired after the job"
    # Not stopped, traced or dead: R or D are as good as S (it may be answering the
    # host's check at the moment it is read).
    state = Path(f"/proc/{zygote.pid}/status").read_text().split("State:\t", 1)[1][0]
    assert state in ("R", "S", "D"), state
    after = job("print('fine')\n", zygote=zygote)
    assert after.stdout == "fine\n"


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSTOP])
def test_a_zygote_killed_or_stopped_during_a_job_is_replaced(sig):
    """Nothing inside can do this (see above); the host's check must still catch it. The
    job gets a verdict of its own, and the next job a new zygote."""
    pool = WarmPool(1, zygotes=True)
    try:
        assert pool.wait_ready(1, timeout=120)
        zygote = pool.take(QUICK, 60)
        first_pid = zygote.pid
        timer = threading.Timer(1.0, os.kill, (first_pid, sig))
        timer.start()
        started = time.monotonic()
        result = zygote.run({"main.py": b"import time\ntime.sleep(3)\nprint('slept')\n"},
                            "main.py", (), Limits(cpu_seconds=5, wall_seconds=5))
        timer.join()
        assert result.status in (Status.KILLED, Status.TIME_LIMIT), result
        assert time.monotonic() - started < 5 + hostile_suite.MARGIN_SECONDS
        assert not zygote.alive()
        assert pool.wait_ready(1, timeout=120)
        fresh = pool.take(QUICK, 60)
        assert fresh is not zygote and fresh.pid != first_pid
        after = fresh.run({"main.py": b"print('fine')\n"}, "main.py", (), QUICK)
        assert after.stdout == "fine\n"
    finally:
        pool.close()


@pytest.mark.parametrize("source", [
    "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
    "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
    "        time.sleep(600)\n    os._exit(0)\nprint('left a sleeper')\n",
], ids=["fork bomb", "sleeping orphan"])
def test_what_a_job_leaves_is_gone_before_the_next(source):
    zygote = live_zygote()
    first = job(source, limits=Limits(cpu_seconds=2, wall_seconds=4, max_processes=8),
                zygote=zygote)
    assert first.status in (Status.OK, Status.TIME_LIMIT), first
    assert not zygote.alive(), "a zygote whose job left processes was kept"
    assert zygote.slot.lock_fd is None  # destroyed, slot released
    second = job("import os\nprint(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))\n"
                 "print(os.getpid())\n")
    assert second.status == Status.OK, second.stderr
    pids, own = second.stdout.splitlines()
    assert pids == f"[1, {own}]"


# --- the hostile suite, each test again, through a zygote -------------------------


def _hostile_through_a_zygote(source: str, _leased: list, *, limits: Limits = hostile_suite.HOSTILE,
                              args=(), files: dict[str, bytes] | None = None) -> SandboxResult:
    """test_sandbox_hostile.hostile, with the run served by a zygote: the host is as it
    was afterwards, except for the zygote (and its bwrap) if it is kept for the next job."""
    zygote = live_zygote()
    started = time.monotonic()
    result = zygote.run({"main.py": source.encode(), **(files or {})}, "main.py",
                        tuple(args), limits)
    elapsed = time.monotonic() - started
    own = {zygote.pid, int(Path(f"/proc/{zygote.pid}/status").read_text()
                           .split("PPid:")[1].split()[0])} if zygote.alive() else set()
    survivors = [pid for pid in hostile_suite.processes_of(zygote.slot.uid) if pid not in own]
    assert survivors == [], f"processes outlived the run: {hostile_suite.describe(survivors)}"
    assert not zygote.job.pids()
    assert elapsed < limits.wall_seconds + hostile_suite.MARGIN_SECONDS
    return result


@pytest.fixture(autouse=True)
def _hostile_runs_go_through_a_zygote(monkeypatch):
    monkeypatch.setattr(hostile_suite, "hostile", _hostile_through_a_zygote)


for _name, _test in list(vars(hostile_suite).items()):
    if _name.startswith("test_") and callable(_test) and "warm" not in _name:
        globals()[f"{_name}__through_a_zygote"] = _test
