"""The GPU worker's path to the sandbox, without a GPU: when this machine has NVIDIA
device nodes (here: stand-ins made for the test, the same character device as
/dev/null), ``process.kernel_place`` chooses the GPU and ``sandbox_runner(on_gpu=True)`` gives
each run a fresh sandbox holding those nodes and nothing else from /dev. What CUDA then
does with them needs a GPU: ``python -m gpu_runner.device_check --sandbox`` on a GPU
worker."""

import json
import os
import stat
import uuid

import pytest

from gpu_runner import process
from grading.sandbox import Limits, sandbox_available

AVAILABLE, WHY_NOT = sandbox_available()


@pytest.fixture
def stand_in_nodes(monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("making device nodes needs root")
    names = [f"/dev/trainer-test-nvidia{suffix}-{uuid.uuid4().hex[:6]}" for suffix in ("ctl", "0", "-uvm")]
    for name in names:
        os.mknod(name, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        os.chmod(name, 0o666)
    monkeypatch.setattr(process, "nvidia_device_nodes", lambda: tuple(names))
    yield names
    for name in names:
        os.unlink(name)


def test_no_nodes_is_named(monkeypatch):
    monkeypatch.setattr(process, "nvidia_device_nodes", lambda: ())
    monkeypatch.setattr("grading.sandbox.sandbox_available", lambda: (True, ""))
    assert process.gpu_sandbox_missing() == "no /dev/nvidia* device nodes on this machine"


def test_a_sandbox_that_is_not_ready_is_named(monkeypatch):
    monkeypatch.setattr("grading.sandbox.sandbox_available", lambda: (False, "bwrap is missing"))
    assert process.gpu_sandbox_missing() == "the sandbox is not ready: bwrap is missing"


def test_missing_python_headers_are_named(monkeypatch, tmp_path):
    from grading.sandbox.install import Install

    if not os.access("/usr/bin/gcc", os.X_OK):
        pytest.skip("no gcc here: the compiler is what would be named")
    (tmp_path / "venv").mkdir()
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.99.1\n")
    monkeypatch.setattr("grading.sandbox.install.current_install", lambda: Install(tmp_path, tmp_path))
    assert process.triton_toolchain_missing() == (
        "the sandbox has no Python headers for Triton's launchers (/usr/include/python3.99/Python.h)")


@pytest.mark.sandbox
@pytest.mark.skipif(not AVAILABLE, reason=WHY_NOT)
def test_with_device_nodes_kernels_go_to_the_gpu_in_a_sandbox_holding_them(monkeypatch, stand_in_nodes):
    monkeypatch.setattr("gpu_runner.devices.local_gpu_name", lambda: "NVIDIA H200")
    assert process.triton_toolchain_missing() == ""  # this machine has gcc and the headers
    assert process.kernel_place() == (True, "")
    source = ("import json, os, sys\n"
              "nodes = sorted(n for n in os.listdir('/dev') if n.startswith('trainer-test-nvidia'))\n"
              "json.dump({'nodes': nodes, 'sys': os.path.isdir('/sys/devices')},"
              " open(sys.argv[1] + '/seen.json', 'w'))\n")
    run = process.sandbox_runner(on_gpu=True)
    result = run(files={"probe.py": source.encode()}, entry="probe.py", args=("/sandbox/out",),
                 limits=Limits(cpu_seconds=5, wall_seconds=20))
    assert result.status == "ok", result.stderr
    seen = json.loads(result.files["seen.json"])
    assert seen == {"nodes": sorted(os.path.basename(name) for name in stand_in_nodes), "sys": True}
