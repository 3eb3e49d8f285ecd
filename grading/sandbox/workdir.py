"""A run's directories on the host: in/ (the submission, read-only inside) and out/.

out/ is a tmpfs the host mounts for each run, owned by the slot user and sized to
Limits.max_result_bytes, so a run can neither fill the host's disk nor hard-link host
files into it (a link cannot cross filesystems), and it disappears with the unmount.
Reading it back never follows a path the sandbox could have planted: every component is
opened relative to its parent with O_NOFOLLOW, and only regular files are read.
"""

import ctypes
import errno
import os
import secrets
import shutil
import stat
from pathlib import Path, PurePosixPath

from grading.sandbox.results import SandboxError

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 2, 4, 8, 32
MNT_DETACH = 2

MAX_OUT_FILES = 256  # tmpfs inode cap: many tiny files are no way around the size cap
MAX_OUT_DEPTH = 8


def check_input_name(name: str) -> PurePosixPath:
    """Validate a key of run_python's `files`: a relative path with no '..' or oddities."""
    path = PurePosixPath(name)
    if (not name or "\0" in name or path.is_absolute()
            or any(part in ("", ".", "..") for part in name.split("/"))):
        raise ValueError(f"not a safe relative file name: {name!r}")
    return path


class RunDir:
    """Directories for one sandboxed interpreter: create, fill, read back, destroy."""

    def __init__(self, runs: Path, slot_user: str, uid: int, gid: int, out_bytes: int):
        self.path = runs / f"{slot_user}-{secrets.token_hex(8)}"
        self.inbox = self.path / "in"
        self.outbox = self.path / "out"
        self.path.mkdir(mode=0o711)
        self.inbox.mkdir(mode=0o755)
        self.outbox.mkdir(mode=0o700)
        options = (f"size={out_bytes},nr_inodes={MAX_OUT_FILES},mode=0700,"
                   f"uid={uid},gid={gid}").encode()
        if _libc.mount(b"tmpfs", bytes(self.outbox), b"tmpfs",
                       MS_NOSUID | MS_NODEV | MS_NOEXEC, options) != 0:
            err = ctypes.get_errno()
            shutil.rmtree(self.path, ignore_errors=True)
            raise SandboxError(f"cannot mount the out/ tmpfs: {os.strerror(err)}")

    def fill(self, files: dict[str, bytes]) -> None:
        """Write the submission into in/ (world-readable, owned by root: read-only inside)."""
        fill_inbox(self.inbox, files)

    def resize_outbox(self, out_bytes: int) -> None:
        """Set out/'s size cap (it is still empty: no job has run yet)."""
        if _libc.mount(b"tmpfs", bytes(self.outbox), b"tmpfs",
                       MS_REMOUNT | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                       f"size={out_bytes}".encode()) != 0:
            raise SandboxError(f"cannot resize out/: {os.strerror(ctypes.get_errno())}")

    def read_outputs(self, max_total_bytes: int) -> tuple[dict[str, bytes], list[str]]:
        """Regular files under out/ (path -> bytes), and notes on what was left out."""
        return read_outputs(self.outbox, max_total_bytes)

    def destroy(self) -> None:
        """Unmount out/ and remove everything. Call only once no sandbox process lives."""
        if os.path.ismount(self.outbox):
            if _libc.umount2(bytes(self.outbox), 0) != 0:
                _libc.umount2(bytes(self.outbox), MNT_DETACH)
        shutil.rmtree(self.path, ignore_errors=True)


def fill_inbox(inbox: Path, files: dict[str, bytes]) -> None:
    """Write the submission into inbox: owned by root, world-readable, so read-only inside."""
    for name, content in files.items():
        relative = check_input_name(name)
        target = inbox / relative
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)


def read_outputs(outbox: Path, max_total_bytes: int) -> tuple[dict[str, bytes], list[str]]:
    """Regular files under outbox (path -> bytes), and notes on what was left out."""
    files: dict[str, bytes] = {}
    skipped: list[str] = []
    budget = [max_total_bytes]
    top = os.open(outbox, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        _read_dir(top, "", 0, files, skipped, budget)
    finally:
        os.close(top)
    return files, skipped


def _read_dir(dir_fd: int, prefix: str, depth: int, files: dict[str, bytes],
              skipped: list[str], budget: list[int]) -> None:
    for name in sorted(os.listdir(dir_fd)):
        relative = f"{prefix}{name}"
        if not _is_utf8(name):
            # os.listdir's surrogate escapes: text nobody downstream can encode.
            skipped.append(f"{str(os.fsencode(relative))[2:-1]} (not a UTF-8 name)")
            continue
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY,
                         dir_fd=dir_fd)
        except OSError as exc:
            # ELOOP: a symlink, never followed. Anything else: not ours to read.
            skipped.append(f"{relative} (symlink)" if exc.errno == errno.ELOOP
                           else f"{relative} ({exc.strerror})")
            continue
        try:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                if depth + 1 >= MAX_OUT_DEPTH:
                    skipped.append(f"{relative}/ (too deep)")
                else:
                    _read_dir(fd, relative + "/", depth + 1, files, skipped, budget)
            elif not stat.S_ISREG(info.st_mode):
                skipped.append(f"{relative} (not a regular file)")
            elif info.st_size > budget[0]:
                skipped.append(f"{relative} ({info.st_size} bytes: over max_result_bytes)")
            else:
                content = _read_at_most(fd, budget[0])
                budget[0] -= len(content)
                files[relative] = content
        finally:
            os.close(fd)


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks = []
    while limit > 0:
        chunk = os.read(fd, min(limit, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        limit -= len(chunk)
    return b"".join(chunks)


def remove_stale(runs: Path, slot_user: str) -> None:
    """Remove run directories a crashed holder of this slot left behind."""
    for stale in runs.glob(f"{slot_user}-*"):
        # out/ of a one-job interpreter; sandbox/ and scratch/ of a zygote (zygote_dirs.py).
        for mount_point in ("out", "sandbox", "scratch"):
            if os.path.ismount(stale / mount_point):
                _libc.umount2(bytes(stale / mount_point), MNT_DETACH)
        shutil.rmtree(stale, ignore_errors=True)
