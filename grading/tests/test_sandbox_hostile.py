"""Hostile programs: each must end with the right status and leave the host as it was.

"The host as it was": this test process is alive (it calls run_python, as the grading
worker does), sentinel files and processes outside are untouched, and no process of the
slot user the run leased is left once run_python returns. Most runs are cold (the slot
is then known, and no torch import is needed); a few go through the warm pool.
"""

import hashlib
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from grading.sandbox import Limits, SandboxResult, Status, run_python, sandbox_available, slots
from grading.sandbox import pool as warm_pool

AVAILABLE, WHY_NOT = sandbox_available()
pytestmark = [pytest.mark.sandbox, pytest.mark.skipif(not AVAILABLE, reason=WHY_NOT)]

REPO = Path(__file__).resolve().parents[2]
HOSTILE = Limits(cpu_seconds=2, wall_seconds=4, memory_bytes=256 << 20, max_processes=8,
                 max_open_files=32, max_file_bytes=1 << 20, max_output_bytes=4096,
                 tmp_bytes=4 << 20, max_result_bytes=1 << 20)
# Slack for polling, killing and a busy two-core machine; still far below "never ends".
MARGIN_SECONDS = 3.0


@pytest.fixture
def leased(monkeypatch):
    """The slots the test's runs lease, in order."""
    seen: list[slots.Slot] = []
    acquire = slots.acquire

    def recording_acquire(*args, **kwargs):
        slot = acquire(*args, **kwargs)
        seen.append(slot)
        return slot

    monkeypatch.setattr(slots, "acquire", recording_acquire)
    return seen


def processes_of(uid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue  # it ended meanwhile
            lines = status.splitlines()
            uids = next(line for line in lines if line.startswith("Uid:"))
            state = next(line for line in lines if line.startswith("State:"))
            # A killed process stays a zombie until its reaper (the host's init, once bwrap
            # is gone) collects it: it runs nothing and holds no memory, so it is not a
            # survivor. The slot's cgroups are already empty by then (kill_all waits).
            if str(uid) in uids.split()[1:] and " Z " not in f" {state.split(None, 1)[1]} ":
                found.append(int(entry.name))
    return found


def describe(pids: list[int]) -> list[str]:
    """Name and state of each pid, for the failure message."""
    out = []
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text().splitlines()
        except OSError:
            out.append(f"{pid} (gone)")
            continue
        name = next((line.split(None, 1)[1] for line in status if line.startswith("Name:")), "?")
        state = next((line.split(None, 1)[1] for line in status if line.startswith("State:")), "?")
        out.append(f"{pid} {name} {state}")
    return out


def hostile(source: str, leased: list, *, limits: Limits = HOSTILE, args=(),
            files: dict[str, bytes] | None = None) -> SandboxResult:
    """Run `source` cold, then check the host: no leftover process, within time."""
    # A warm pool left by an earlier test refills in the background and may lease the
    # slot this run releases; its fresh interpreter would look like a survivor.
    warm_pool.shutdown()
    started = time.monotonic()
    result = run_python(files={"main.py": source.encode(), **(files or {})}, entry="main.py",
                        args=args, limits=limits, warm=False)
    elapsed = time.monotonic() - started
    assert leased, "the run leased no slot"
    survivors = processes_of(leased[-1].uid)
    assert survivors == [], f"processes of the slot user outlived the run: {describe(survivors)}"
    assert elapsed < limits.wall_seconds + MARGIN_SECONDS
    return result


def digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_fork_bomb_is_contained(leased):
    source = (
        "import os\n"
        "while True:\n"
        "    try:\n        os.fork()\n    except OSError:\n        pass\n"
    )
    result = hostile(source, leased)
    assert result.status == Status.TIME_LIMIT


def test_process_limit_holds(leased):
    source = (
        "import os, time\n"
        "made = 0\n"
        "try:\n"
        "    while True:\n"
        "        if os.fork() == 0:\n            time.sleep(30)\n            os._exit(0)\n"
        "        made += 1\n"
        "except OSError as e:\n"
        "    print(made, e.errno)\n"
    )
    result = hostile(source, leased, limits=Limits(max_processes=6, wall_seconds=5))
    made, errno_value = map(int, result.stdout.split())
    assert errno_value == 11  # EAGAIN
    assert made < 6


def test_memory_bomb_is_memory_limit(leased):
    source = "chunks = []\nwhile True:\n    chunks.append(bytearray(16 << 20))\n"
    result = hostile(source, leased)
    assert result.status == Status.MEMORY_LIMIT
    assert result.peak_memory_bytes <= HOSTILE.memory_bytes


def test_busy_loop_is_stopped_by_cpu_time(leased):
    result = hostile("while True:\n    pass\n", leased)
    assert result.status == Status.TIME_LIMIT
    assert result.cpu_seconds < HOSTILE.cpu_seconds + 1.5


def test_sleeping_forever_is_stopped_by_the_wall_clock(leased):
    result = hostile("import time\ntime.sleep(3600)\n", leased)
    assert result.status == Status.TIME_LIMIT
    assert "wall clock" in result.note
    assert HOSTILE.wall_seconds <= result.wall_seconds < HOSTILE.wall_seconds + 1


def test_gigabytes_of_output_are_cut_off(leased):
    source = "import os\nblock = b'y' * (1 << 20)\nfor _ in range(4096):\n    os.write(1, block)\n"
    result = hostile(source, leased)
    assert result.status == Status.OUTPUT_LIMIT
    assert len(result.stdout) == HOSTILE.max_output_bytes


def test_gigabyte_writes_are_bounded_everywhere(leased):
    source = (
        "import errno\n"
        "block = b'z' * (1 << 20)\n"
        "for path in ('/sandbox/out/big', '/tmp/big', '/sandbox/in/big', '/big', '/dev/shm/big'):\n"
        "    written = 0\n"
        "    try:\n"
        "        with open(path, 'wb') as f:\n"
        "            for _ in range(1024):\n                f.write(block)\n                written += 1\n"
        "    except OSError as e:\n"
        "        print(path, written, errno.errorcode[e.errno])\n"
        "    else:\n"
        "        print(path, written, 'WROTE-A-GIGABYTE')\n"
    )
    free_before = os.statvfs("/").f_bavail
    result = hostile(source, leased)
    assert "WROTE-A-GIGABYTE" not in result.stdout
    lines = {line.split()[0]: line.split()[1:] for line in result.stdout.splitlines()}
    assert lines["/sandbox/out/big"][1] in ("EFBIG", "ENOSPC")
    assert lines["/tmp/big"][1] in ("EFBIG", "ENOSPC")
    assert int(lines["/tmp/big"][0]) <= 4
    assert lines["/sandbox/in/big"][1] in ("EROFS", "EACCES")
    assert lines["/big"][1] in ("EROFS", "EACCES")
    assert sum(len(v) for v in result.files.values()) <= HOSTILE.max_result_bytes
    # Nothing landed on the host's disk (other tests may write a little meanwhile).
    assert (free_before - os.statvfs("/").f_bavail) * os.statvfs("/").f_frsize < 64 << 20


def test_planted_symlinks_are_never_followed(leased, tmp_path):
    sentinel = tmp_path / "sentinel.txt"
    sentinel.write_text("host secret")
    targets = {
        "result.npy": "/etc/shadow",
        "db.sqlite3": str(REPO / "var" / "trainer.sqlite3"),
        "settings.py": str(REPO / "trainer" / "settings.py"),
        "sentinel": str(sentinel),
        "etc": "/etc",
        "loop": "loop",
    }
    source = (
        "import os, sys\n"
        f"for name, target in {targets!r}.items():\n"
        "    os.symlink(target, '/sandbox/out/' + name)\n"
        "os.mkdir('/sandbox/out/sub')\n"
        "os.symlink('/etc/passwd', '/sandbox/out/sub/passwd')\n"
        "os.mkfifo('/sandbox/out/fifo')\n"
        "open('/sandbox/out/real.txt', 'w').write('mine')\n"
        "try:\n    os.link('/etc/passwd', '/sandbox/out/hard')\n"
        "except OSError as e:\n    print('link', e.errno)\n"
    )
    before = digest(str(sentinel))
    result = hostile(source, leased)
    assert result.status == Status.OK, result.stderr
    assert result.files == {"real.txt": b"mine"}
    assert "result.npy (symlink)" in result.note and "fifo (not a regular file)" in result.note
    assert "sub/passwd (symlink)" in result.note
    assert result.stdout.startswith("link 18")  # EXDEV: out/ is its own filesystem
    assert digest(str(sentinel)) == before


def test_host_files_cannot_be_read(leased, tmp_path):
    sentinel = Path("/tmp") / f"sandbox-sentinel-{os.getpid()}"
    sentinel.write_text("host secret")
    try:
        paths = [str(REPO / "trainer" / "settings.py"), str(REPO / "var" / "trainer.sqlite3"),
                 "/etc/shadow", "/root", "/home", "/work", str(sentinel),
                 "/opt/trainer-sandbox/seccomp.bpf", "/var/lib/trainer-sandbox",
                 "/proc/1/root/etc/shadow", "/sys/fs/cgroup"]
        source = (
            "import os, sys\n"
            "for path in sys.argv[1:]:\n"
            "    try:\n"
            "        if os.path.isdir(path):\n            print(path, 'LISTED', os.listdir(path))\n"
            "        else:\n            print(path, 'READ', len(open(path, 'rb').read()))\n"
            "    except OSError as e:\n"
            "        print(path, 'denied', type(e).__name__)\n"
        )
        result = hostile(source, leased, args=tuple(paths))
        assert result.status == Status.OK, result.stderr
        verdicts = dict(line.split(" ", 2)[:2] for line in result.stdout.splitlines())
        assert verdicts == dict.fromkeys(paths, "denied"), result.stdout
        assert "host secret" not in result.stdout
    finally:
        sentinel.unlink()


def test_etc_has_no_host_secrets(leased):
    result = hostile("import os\nprint(sorted(os.listdir('/etc')))\nprint(open('/etc/passwd').read())\n",
                     leased)
    assert result.status == Status.OK, result.stderr
    assert "shadow" not in result.stdout
    assert "root:x:0:0:root:/nonexistent" in result.stdout
    assert "/root" not in result.stdout


def test_no_network_even_to_the_hosts_own_services(leased):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    source = (
        "import socket, sys\n"
        "for port in sys.argv[1:]:\n"
        "    for family, host in ((socket.AF_INET, '127.0.0.1'), (socket.AF_INET6, '::1')):\n"
        "        try:\n"
        "            socket.create_connection((host, int(port)), timeout=1).close()\n"
        "            print(port, 'CONNECTED')\n"
        "        except OSError as e:\n"
        "            print(port, 'refused', e.errno)\n"
        "try:\n    socket.getaddrinfo('example.com', 80)\n    print('RESOLVED')\n"
        "except OSError:\n    print('no dns')\n"
    )
    try:
        listener.settimeout(0)
        result = hostile(source, leased, args=("6379", "5432", str(port)))
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing reached the host's listener
    finally:
        listener.close()
    assert result.status == Status.OK, result.stderr
    assert "CONNECTED" not in result.stdout and "RESOLVED" not in result.stdout
    assert result.stdout.count("refused 1") == 6  # EPERM from seccomp, for each


def test_killing_the_parent_and_everyone_hurts_nobody_outside(leased):
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        source = (
            "import os, signal, sys\n"
            "for pid in (os.getppid(), 1, int(sys.argv[1]), int(sys.argv[2])):\n"
            "    try:\n        os.kill(pid, signal.SIGKILL)\n        print(pid, 'sent')\n"
            "    except OSError as e:\n        print(pid, type(e).__name__)\n"
            "try:\n    os.kill(-1, signal.SIGKILL)\n"
            "except ProcessLookupError:\n    pass  # nobody else to kill in here\n"
            "print('still here')\n"
        )
        result = hostile(source, leased, args=(str(os.getpid()), str(bystander.pid)))
        assert bystander.poll() is None, "a host process was killed"
    finally:
        bystander.kill()
        bystander.wait()
    assert result.status == Status.OK, result.stderr
    assert result.stdout.endswith("still here\n")


def test_proc_self_writes_do_not_reach_the_host(leased):
    hostname = socket.gethostname()
    source = (
        "import os\n"
        "for path, value in (('/proc/self/oom_score_adj', '-1000'), ('/proc/sys/kernel/hostname', 'owned'),\n"
        "                    ('/proc/sysrq-trigger', 'b'), ('/proc/self/setgroups', 'allow'),\n"
        "                    ('/proc/self/uid_map', '0 0 1'), ('/proc/sys/vm/drop_caches', '3')):\n"
        "    try:\n"
        "        with open(path, 'w') as f:\n            f.write(value)\n"
        "        print(path, 'WRITTEN')\n"
        "    except OSError as e:\n"
        "        print(path, 'denied')\n"
    )
    result = hostile(source, leased)
    assert result.status == Status.OK, result.stderr
    assert "WRITTEN" not in result.stdout, result.stdout
    assert socket.gethostname() == hostname


# mov eax, 20 (getpid in the i386 table); int 0x80; ret -- run from executable memory.
I386_GETPID = """
import mmap
code = bytes([0xB8, 20, 0, 0, 0, 0xCD, 0x80, 0xC3])
page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(code)
ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))()
"""


@pytest.mark.parametrize(("name", "call"), [
    ("ptrace", "libc.ptrace(0, 0, 0, 0)"),                      # PTRACE_TRACEME
    ("unshare", "libc.unshare(0x10000000)"),                    # CLONE_NEWUSER
    ("mount", "libc.mount(b'none', b'/tmp', b'tmpfs', 0, None)"),
    ("bpf", "libc.syscall(321, 0, 0, 0)"),
    ("keyctl", "libc.syscall(250, 0, 0, 0)"),
    ("process_vm_readv", "libc.syscall(310, 1, 0, 0, 0, 0, 0)"),
    ("x32 ABI getpid", "libc.syscall(0x40000000 + 39)"),
    ("i386 ABI getpid", I386_GETPID),
])
def test_forbidden_syscalls_are_rejected(leased, name, call):
    source = f"import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n{call}\nprint('SURVIVED')\n"
    result = hostile(source, leased)
    assert result.status == Status.REJECTED, (name, result)
    assert result.signal == signal.SIGSYS
    assert "SURVIVED" not in result.stdout


def test_socket_family_with_high_bits_set_is_still_refused(leased):
    """The kernel reads the family as an int: 0x1_0000_0002 is AF_INET to it."""
    source = (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.syscall.restype = ctypes.c_long\n"
        "print(libc.syscall(41, ctypes.c_long(0x100000002), 1, 0), ctypes.get_errno())\n"
    )
    result = hostile(source, leased)
    assert result.stdout.split() == ["-1", "1"]  # EPERM


def test_detached_processes_do_not_outlive_the_run(leased):
    source = (
        "import os, subprocess\n"
        "subprocess.Popen(['sleep', '600'], start_new_session=True)\n"
        "if os.fork() == 0:\n    os.setsid()\n    import time\n    time.sleep(600)\n"
        "print('leaving')\n"
    )
    result = hostile(source, leased)
    assert result.status == Status.OK, result.stderr
    assert result.wall_seconds < HOSTILE.wall_seconds


def test_file_and_descriptor_limits_hold(leased):
    source = (
        "import errno\n"
        "try:\n    open('/tmp/f', 'wb').write(b'x' * (2 << 20))\n"
        "except OSError as e:\n    print('size', errno.errorcode[e.errno])\n"
        "files = []\n"
        "try:\n    while True:\n        files.append(open('/dev/null'))\n"
        "except OSError as e:\n    print('open', len(files), errno.errorcode[e.errno])\n"
    )
    result = hostile(source, leased)
    lines = result.stdout.split("\n")
    assert lines[0] == "size EFBIG"
    _, opened, code = lines[1].split()
    assert code == "EMFILE" and int(opened) < HOSTILE.max_open_files


def test_hostile_run_in_a_warm_interpreter_is_contained():
    warm = warm_pool.get_pool()
    assert warm is not None and warm.wait_ready(1, timeout=120)
    started = time.monotonic()
    result = run_python(
        files={"main.py": b"import os\nwhile True:\n    try:\n        os.fork()\n"
                          b"    except OSError:\n        pass\n"},
        entry="main.py", limits=Limits(cpu_seconds=2, wall_seconds=4, max_processes=8),
        warm=True)
    assert result.status == Status.TIME_LIMIT
    assert time.monotonic() - started < 4 + MARGIN_SECONDS
    warm_pool.shutdown()
