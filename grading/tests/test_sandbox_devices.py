"""run_python(devices=...): the device nodes a GPU worker's run is given, and nothing else.

CI has no GPU, so these bind stand-in nodes made for the test under /dev (the same
character device as /dev/null, 1:3). They show what a GPU run relies on: a node named
for the run is there and opens, through its group when its mode keeps others out; a node
not named is absent; /sys is readable but not writable; and a path that is not a device
under /dev is refused before bwrap sees it.
"""

import grp
import os
import stat
import uuid

import pytest

from grading.sandbox import Limits, run_python, sandbox_available
from grading.sandbox.devices import bwrap_device_arguments, check_devices, device_groups

AVAILABLE, WHY_NOT = sandbox_available()
QUICK = Limits(cpu_seconds=5, wall_seconds=20)
NULL_DEVICE = os.makedev(1, 3)

PROBE = """
import json, os, stat, sys
report = {}
for path in sys.argv[1:]:
    try:
        info = os.stat(path)
    except OSError as error:
        report[path] = "absent: " + error.strerror
        continue
    kind = "char" if stat.S_ISCHR(info.st_mode) else "other"
    try:
        with open(path, "wb") as node:
            node.write(b"x")
        report[path] = kind + ", opened"
    except OSError as error:
        report[path] = kind + ", " + error.strerror
try:
    open("/sys/trainer-probe", "w")
    report["/sys"] = "writable"
except OSError as error:
    report["/sys"] = "listed" if os.listdir("/sys/devices") else "empty"
print(json.dumps(report))
"""


@pytest.fixture
def make_node():
    """Make stand-in device nodes under /dev (root only) and remove them afterwards."""
    if os.geteuid() != 0:
        pytest.skip("making device nodes needs root")
    made = []

    def make(mode: int, gid: int = 0) -> str:
        path = f"/dev/trainer-test-{uuid.uuid4().hex[:8]}"
        os.mknod(path, stat.S_IFCHR | mode, NULL_DEVICE)
        os.chmod(path, mode)  # mknod's mode passes through the umask
        os.chown(path, 0, gid)
        made.append(path)
        return path

    yield make
    for path in made:
        os.unlink(path)


def some_group() -> int:
    """A group no slot user belongs to: the device's group is the only way in."""
    for name in ("video", "render", "kvm", "disk"):
        try:
            return grp.getgrnam(name).gr_gid
        except KeyError:
            continue
    pytest.skip("no spare system group to own the test node")


def probe(*paths: str, devices=()) -> dict:
    import json

    result = run_python(files={"probe.py": PROBE.encode()}, entry="probe.py", args=paths,
                        limits=QUICK, warm=False, devices=devices)
    assert result.status == "ok", (result.status, result.stderr)
    return json.loads(result.stdout)


# ---------------------------------------------------------------- checks on the host


def test_only_character_devices_under_dev_are_accepted(make_node, tmp_path):
    node = make_node(0o666)
    assert check_devices([node, node]) == (node,)
    link = f"{node}-link"
    os.symlink(node, link)
    try:
        for path, why in ((link, "symbolic link"), ("/etc/passwd", "not a plain path under /dev"),
                          ("/dev/../etc/passwd", "not a plain path"), ("/dev/shm", "not a character device"),
                          ("/dev/trainer-test-missing", "cannot be read"), ("dev/null", "not a plain path")):
            with pytest.raises(ValueError, match=why):
                check_devices([path])
    finally:
        os.unlink(link)


def test_group_only_nodes_bring_their_group(make_node):
    gid = some_group()
    open_node, group_node, root_node = make_node(0o666), make_node(0o660, gid), make_node(0o600)
    assert device_groups([open_node, root_node]) == ()
    assert device_groups([open_node, group_node, root_node]) == (gid,)


def test_bwrap_gets_dev_binds_and_a_read_only_sys_only_with_devices():
    assert bwrap_device_arguments(()) == []
    assert bwrap_device_arguments(("/dev/nvidia0", "/dev/nvidiactl")) == [
        "--dev-bind", "/dev/nvidia0", "/dev/nvidia0", "--dev-bind", "/dev/nvidiactl", "/dev/nvidiactl",
        "--ro-bind-try", "/sys", "/sys"]


def test_run_python_refuses_a_host_file_as_a_device():
    with pytest.raises(ValueError, match="not a plain path under /dev"):
        run_python(files={"a.py": b""}, entry="a.py", devices=("/etc/shadow",))


# ---------------------------------------------------------------- inside the sandbox


@pytest.mark.sandbox
@pytest.mark.skipif(not AVAILABLE, reason=WHY_NOT)
def test_a_named_node_is_there_and_opens_and_others_are_not(make_node):
    given, not_given = make_node(0o666), make_node(0o666)
    report = probe(given, not_given, devices=(given,))
    assert report[given] == "char, opened"
    assert report[not_given].startswith("absent")
    assert report["/sys"] == "listed"


@pytest.mark.sandbox
@pytest.mark.skipif(not AVAILABLE, reason=WHY_NOT)
def test_a_group_only_node_opens_through_its_group_and_a_root_only_one_does_not(make_node):
    group_node, root_node = make_node(0o660, some_group()), make_node(0o600)
    report = probe(group_node, root_node, devices=(group_node, root_node))
    assert report[group_node] == "char, opened"
    assert report[root_node] == "char, Permission denied"


@pytest.mark.sandbox
@pytest.mark.skipif(not AVAILABLE, reason=WHY_NOT)
def test_without_devices_sys_is_not_there():
    result = run_python(files={"a.py": b"import os; print(os.path.exists('/sys/devices'))"}, entry="a.py",
                        limits=QUICK, warm=False)
    assert result.stdout.strip() == "False"
