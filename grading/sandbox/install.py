"""Where scripts/setup-sandbox put things, and whether this machine can run the sandbox."""

import os
import pwd
import shutil
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
# memory: the limit and the OOM verdict; pids: a second fork-bomb wall after RLIMIT_NPROC;
# cpuacct: CPU time of all the run's processes together.
CGROUP_CONTROLLERS = ("memory", "pids", "cpuacct")
CGROUP_PARENT = "trainer-sandbox"
SLOT_USER_PREFIX = "trainer-sbx"


@dataclass(frozen=True)
class Install:
    """Paths of an installed sandbox (defaults match scripts/setup-sandbox)."""

    root: Path
    state: Path

    @property
    def python(self) -> Path:
        return self.root / "venv" / "bin" / "python"

    @property
    def venv(self) -> Path:
        return self.root / "venv"

    @property
    def etc(self) -> Path:
        return self.root / "etc"

    @property
    def seccomp_filter(self) -> Path:
        return self.root / "seccomp.bpf"

    @property
    def runs(self) -> Path:
        return self.state / "runs"

    @property
    def locks(self) -> Path:
        return self.state / "locks"

    def slot_count(self) -> int:
        try:
            return int((self.root / "slots").read_text())
        except (OSError, ValueError):
            return 0


def current_install() -> Install:
    return Install(
        root=Path(os.environ.get("TRAINER_SANDBOX_ROOT", "/opt/trainer-sandbox")),
        state=Path(os.environ.get("TRAINER_SANDBOX_STATE", "/var/lib/trainer-sandbox")),
    )


BWRAP = "/usr/bin/bwrap"


def sandbox_available() -> tuple[bool, str]:
    """(True, "") when run_python can work here; otherwise (False, what is missing)."""
    install = current_install()
    if os.geteuid() != 0:
        return False, "the sandbox needs root (to switch to the slot users and set cgroups)"
    if not os.access(BWRAP, os.X_OK):
        return False, f"{BWRAP} is missing (run scripts/setup-sandbox)"
    if not os.access(install.python, os.X_OK):
        return False, f"the sandbox Python env {install.venv} is missing (run scripts/setup-sandbox)"
    if not install.seccomp_filter.is_file():
        return False, f"the seccomp filter {install.seccomp_filter} is missing (run scripts/setup-sandbox)"
    slots = install.slot_count()
    if slots < 1:
        return False, "no sandbox slots are configured (run scripts/setup-sandbox)"
    try:
        pwd.getpwnam(f"{SLOT_USER_PREFIX}{slots - 1}")
    except KeyError:
        return False, f"the slot users {SLOT_USER_PREFIX}0..{slots - 1} are missing (run scripts/setup-sandbox)"
    for controller in CGROUP_CONTROLLERS:
        if not (CGROUP_ROOT / controller / "cgroup.procs").exists():
            return False, f"the cgroup v1 controller {controller} is not mounted under {CGROUP_ROOT}"
    try:
        if int(Path("/proc/sys/user/max_user_namespaces").read_text()) < 1:
            return False, "user namespaces are disabled (user.max_user_namespaces is 0)"
    except (OSError, ValueError):
        return False, "cannot tell whether user namespaces are enabled"
    if shutil.which("kill", path="/usr/bin:/bin") is None:
        return False, "the kill command is missing"
    return True, ""
