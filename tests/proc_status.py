"""A process's memory as the kernel reports it, for the attack tests that bound it (issue 15)."""

from __future__ import annotations


def memory_kib(pid: int) -> dict[str, int]:
    """``VmRSS`` (now) and ``VmHWM`` (the peak so far) of a process, in KiB, from ``/proc/<pid>/status``."""
    found = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(value.split()[0])
    return found


def memory_mib(pid: int) -> dict[str, int]:
    """:func:`memory_kib` in whole MiB."""
    return {key: kib // 1024 for key, kib in memory_kib(pid).items()}
