"""Device nodes a sandboxed run may be given (a GPU worker's /dev/nvidia*), checked on the
host before bwrap binds them.

A run gets only the nodes named for it, each bound with ``--dev-bind`` over bwrap's
minimal /dev (a plain bind lands on a ``nodev`` mount and cannot be opened). The CUDA
driver also reads /sys (PCI topology, NUMA nodes); without it ``cuInit`` fails with
CUDA_ERROR_OPERATING_SYSTEM, so a run with devices gets /sys read-only too. Nodes the
slot user may not open by mode (``crw-rw---- root video``) are opened through their
group, which the launcher keeps as a supplementary group of the run.
"""

from __future__ import annotations

import os
import stat

DEVICE_ROOT = "/dev/"
# What a run with devices also sees, read-only (see the module docstring).
DEVICE_SUPPORT_PATHS = ("/sys",)


def check_devices(paths) -> tuple[str, ...]:
    """The device paths as given, each checked: an absolute path under /dev, no symbolic
    link on the way, a character device. ValueError names the first that is not, so a
    setting that would bind a host file into the sandbox never reaches bwrap."""
    checked = []
    for path in paths:
        path = str(path)
        if not path.startswith(DEVICE_ROOT) or os.path.normpath(path) != path:
            raise ValueError(f"device {path!r} is not a plain path under {DEVICE_ROOT}")
        if os.path.realpath(path) != path:
            raise ValueError(f"device {path!r} is, or goes through, a symbolic link")
        try:
            mode = os.lstat(path).st_mode
        except OSError as error:
            raise ValueError(f"device {path!r} cannot be read: {error.strerror}") from None
        if not stat.S_ISCHR(mode):
            raise ValueError(f"device {path!r} is not a character device")
        if path not in checked:
            checked.append(path)
    return tuple(checked)


def device_groups(paths) -> tuple[int, ...]:
    """The groups through which the slot user may open ``paths``: the owning group of
    each node that others may not read and write but its group may."""
    groups = set()
    for path in paths:
        info = os.stat(path)
        others_rw = info.st_mode & (stat.S_IROTH | stat.S_IWOTH) == stat.S_IROTH | stat.S_IWOTH
        group_rw = info.st_mode & (stat.S_IRGRP | stat.S_IWGRP) == stat.S_IRGRP | stat.S_IWGRP
        if not others_rw and group_rw:
            groups.add(info.st_gid)
    return tuple(sorted(groups))


def bwrap_device_arguments(paths) -> list[str]:
    """bwrap's arguments for ``paths`` (already checked); they must follow ``--dev /dev``."""
    if not paths:
        return []
    args = []
    for path in paths:
        args += ["--dev-bind", path, path]
    for path in DEVICE_SUPPORT_PATHS:
        args += ["--ro-bind-try", path, path]
    return args
