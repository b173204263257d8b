"""The system calls agent code never needs and an escape does: one list, two filters.

The agent-code sandbox (``palaestra.envs.runtimes.sandbox``) refuses all of them with EPERM; a
Docker worker that builds such sandboxes inside its container (``palaestra.workers.docker``)
runs under a profile refusing the same list but for :data:`SANDBOX_BUILD_CALLS`, the calls the
worker makes to build the sandbox, so the agent sits behind both filters. The list lives in the
kernel because both of its users do: neither may import the other.
"""

from __future__ import annotations

DENIED_SYSCALLS = (
    "unshare",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "syslog",
    "acct",
    "quotactl",
    "open_by_handle_at",
    "name_to_handle_at",
    "lookup_dcookie",
    "iopl",
    "ioperm",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "sethostname",
    "setdomainname",
    "vhangup",
    "nfsservctl",
    "personality",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
)

#: what the worker itself calls to build a sandbox (bwrap's namespaces, mounts and pivot_root)
SANDBOX_BUILD_CALLS = ("unshare", "mount", "umount2", "pivot_root", "sethostname")

#: socket families refused to agent code: AF_VSOCK is not network-namespaced (from a VM guest it
#: reaches the hypervisor whatever the sandbox's empty network namespace says)
DENIED_SOCKET_FAMILIES = (40,)  # AF_VSOCK
