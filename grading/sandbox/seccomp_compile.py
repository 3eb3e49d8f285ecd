"""Compile the sandbox's seccomp policy to a raw BPF program that bwrap loads (--seccomp FD).

Run with Debian's /usr/bin/python3, which has libseccomp's bindings (python3-seccomp):
    /usr/bin/python3 grading/sandbox/seccomp_compile.py /opt/trainer-sandbox/seccomp.bpf
scripts/setup-sandbox does this. The policy is a deny list on top of the namespaces,
rlimits and the unprivileged UID: it removes the kernel interfaces a Python solution has no
use for and that widen the attack surface, so a process that calls one is killed outright
(reported as "rejected"); sockets of any family but AF_UNIX fail with EPERM instead, because
libraries probe for them harmlessly. Syscalls of another ABI (i386 via int 0x80, x32) are killed by
libseccomp's bad-architecture action.
"""

import errno
import socket
import sys

# Killed on sight: debugging other processes, changing mounts or namespaces, loading
# kernel code, keyrings, io_uring (its operations bypass seccomp's argument checks).
KILL_SYSCALLS = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr",
    "unshare", "setns",
    "keyctl", "add_key", "request_key",
    "bpf", "perf_event_open", "userfaultfd",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "syslog",
    "open_by_handle_at", "name_to_handle_at", "lookup_dcookie",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
)

# Socket families refused with EPERM: the network namespace already has no route out.
DENIED_SOCKET_FAMILIES = (
    socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK, socket.AF_PACKET,
)
# The only family allowed at all. Others are not all confined by the network namespace:
# AF_VSOCK reaches the hypervisor's host (CID 2) from any namespace of a VM.
ALLOWED_SOCKET_FAMILY = socket.AF_UNIX

# clone() flags that would create namespaces (bwrap made its own before the filter loads).
NAMESPACE_CLONE_FLAGS = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)


def build_filter():
    """Return a seccomp.SyscallFilter holding the policy above (default: allow)."""
    import seccomp  # Debian's python3-seccomp; only /usr/bin/python3 has it.

    policy = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    # Another ABI's syscall (i386 through int 0x80) would dodge every rule below.
    policy.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)
    for name in KILL_SYSCALLS:
        try:
            policy.add_rule(seccomp.KILL_PROCESS, name)
        except (RuntimeError, ValueError) as exc:  # a name this libseccomp lacks
            print(f"seccomp: skipping {name}: {exc}", file=sys.stderr)
    for family in DENIED_SOCKET_FAMILIES:
        # The kernel reads the family as a 32-bit int: compare those bits only, or
        # setting the upper half would slip past an exact 64-bit match.
        policy.add_rule(seccomp.ERRNO(errno.EPERM), "socket",
                        seccomp.Arg(0, seccomp.MASKED_EQ, 0xFFFFFFFF, family))
    for call in ("socket", "socketpair"):
        # Anything but exactly AF_UNIX (upper bits set included) is refused.
        policy.add_rule(seccomp.ERRNO(errno.EPERM), call,
                        seccomp.Arg(0, seccomp.NE, ALLOWED_SOCKET_FAMILY))
    for flag in NAMESPACE_CLONE_FLAGS:
        policy.add_rule(
            seccomp.KILL_PROCESS, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag)
        )
    # clone3 passes its flags in memory, where seccomp cannot look: answer ENOSYS so
    # glibc falls back to clone(), whose flags the rules above check.
    policy.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    return policy


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(f"usage: {argv[0]} OUTPUT.bpf", file=sys.stderr)
        return 2
    with open(argv[1], "wb") as out:
        build_filter().export_bpf(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
