"""A zygote's directories on the host, new (and verified empty) for every job.

Two tmpfs mounts per zygote, made by the host before bwrap binds them:
- sandbox/ (bound at /sandbox, noexec): for each job the host makes in/ (owned by root,
  world-readable: read-only inside) and out/ (owned by the slot user), and resizes the
  mount so that out/ can take exactly max_result_bytes more; after the job both are
  removed.
- scratch/ (bound as /tmp and /dev/shm through its tmp/ and shm/, both mode 1777), resized
  to the job's tmp_bytes; after the job their contents are removed.
The binds inside share these mounts' superblocks, so what the host creates, resizes and
removes here is what the next job sees. Every job's processes are dead before the host
empties anything, so nothing races the removal, and shutil.rmtree never follows a link.
finish_job() says whether everything is gone; a zygote whose directories are not empty is
not used again.
"""

import ctypes
import os
import secrets
import shutil
from pathlib import Path

from grading.sandbox.results import SandboxError
from grading.sandbox.workdir import (
    MAX_OUT_FILES,
    MNT_DETACH,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_REMOUNT,
    fill_inbox,
    read_outputs,
)

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]

SANDBOX_FLAGS = MS_NOSUID | MS_NODEV | MS_NOEXEC
# /tmp keeps exec, as bwrap's own --tmpfs does: compilers (Triton's) load what they build.
SCRATCH_FLAGS = MS_NOSUID | MS_NODEV
# Until the first job sets them: enough for in/ and out/ to be made.
INITIAL_BYTES = 1 << 20


class ZygoteDirs:
    """Create, prepare per job, read back, empty, destroy."""

    def __init__(self, runs: Path, slot_user: str, uid: int, gid: int):
        self.uid, self.gid = uid, gid
        self.path = runs / f"{slot_user}-{secrets.token_hex(8)}"
        self.sandbox = self.path / "sandbox"
        self.scratch = self.path / "scratch"
        self.tmp = self.scratch / "tmp"
        self.shm = self.scratch / "shm"
        self.path.mkdir(mode=0o711)
        try:
            for mount_point, flags in ((self.sandbox, SANDBOX_FLAGS), (self.scratch, SCRATCH_FLAGS)):
                mount_point.mkdir(mode=0o755)
                _mount(mount_point, flags, f"size={INITIAL_BYTES},mode=0755,uid=0,gid=0")
            for shared in (self.tmp, self.shm):
                shared.mkdir()
                os.chmod(shared, 0o1777)  # like /tmp: everyone may create, only owners delete
        except BaseException:
            self.destroy()
            raise

    @property
    def inbox(self) -> Path:
        return self.sandbox / "in"

    @property
    def outbox(self) -> Path:
        return self.sandbox / "out"

    def start_job(self, files: dict[str, bytes], max_result_bytes: int, tmp_bytes: int) -> None:
        """Make the job's in/ (filled) and empty out/, and size both mounts for it."""
        self.inbox.mkdir(mode=0o755)
        fill_inbox(self.inbox, files)
        self.outbox.mkdir(mode=0o700)
        os.chown(self.outbox, self.uid, self.gid)
        usage = os.statvfs(self.sandbox)
        used_bytes = (usage.f_blocks - usage.f_bfree) * usage.f_frsize
        used_inodes = usage.f_files - usage.f_ffree
        _mount(self.sandbox, MS_REMOUNT | SANDBOX_FLAGS,
               f"size={used_bytes + max_result_bytes},nr_inodes={used_inodes + MAX_OUT_FILES}")
        _mount(self.scratch, MS_REMOUNT | SCRATCH_FLAGS, f"size={tmp_bytes}")

    def read_outputs(self, max_total_bytes: int) -> tuple[dict[str, bytes], list[str]]:
        return read_outputs(self.outbox, max_total_bytes)

    def finish_job(self) -> bool:
        """Remove everything the job had or made; True if nothing is left anywhere."""
        for job_dir in (self.inbox, self.outbox):
            shutil.rmtree(job_dir, ignore_errors=True)
        for shared in (self.tmp, self.shm):
            with os.scandir(shared) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(entry.path, ignore_errors=True)
                    else:
                        try:
                            os.unlink(entry.path)
                        except FileNotFoundError:
                            pass
        return (os.listdir(self.sandbox) == [] and os.listdir(self.tmp) == []
                and os.listdir(self.shm) == [] and sorted(os.listdir(self.scratch)) == ["shm", "tmp"]
                and all(os.stat(shared).st_mode & 0o7777 == 0o1777 for shared in (self.tmp, self.shm)))

    def destroy(self) -> None:
        """Unmount and remove everything. Call only once no sandbox process lives."""
        for mount_point in (self.sandbox, self.scratch):
            if os.path.ismount(mount_point):
                if _libc.umount2(bytes(mount_point), 0) != 0:
                    _libc.umount2(bytes(mount_point), MNT_DETACH)
        shutil.rmtree(self.path, ignore_errors=True)


def _mount(target: Path, flags: int, options: str) -> None:
    if _libc.mount(b"tmpfs", bytes(target), b"tmpfs", flags, options.encode()) != 0:
        raise SandboxError(f"cannot mount a tmpfs on {target}: {os.strerror(ctypes.get_errno())}")
