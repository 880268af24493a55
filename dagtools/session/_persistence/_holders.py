"""Who holds a store's lease, written into the lease itself, so a holder known to be gone is not waited for.

A lease names its holder: the machine (its boot, so a restarted machine is another), the process ID
and that process's start time (so a reused PID is another process), then random bits. Another
process on the same machine that finds the lease taken can tell whether its holder still runs: a
killed worker's lease is broken at once instead of blocking its sessions until it expires. A lease
held from another machine cannot be checked from here and runs out as before (`LEASE_SECONDS`).
"""

from __future__ import annotations

import os
import secrets
import socket
from functools import cache
from pathlib import Path

__all__ = ["holder_gone", "new_token"]


@cache
def _machine() -> str:
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot = ""
    return f"{socket.gethostname()}/{boot}".replace(":", "_")


def _started(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot), "" where that cannot be read, None if it is gone
    (a zombie, killed and not yet reaped by its parent, is gone: it runs nothing and holds nothing)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    except OSError:
        stat = ""
    if stat:
        fields = stat.rsplit(")", 1)[-1].split()
        return None if fields[0] in ("Z", "X") else fields[19]  # the state (field 3); the start time (field 22)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return ""


_this: tuple[int, str] = (0, "")  # this process's PID and the token's prefix naming it


def new_token() -> str:
    """A lease token naming this process: machine, PID, start time, then 128 random bits."""
    global _this
    pid = os.getpid()
    if _this[0] != pid:  # read once per process (a forked child is another): a lease is taken every call
        _this = (pid, f"{_machine()}:{pid}:{_started(pid) or ''}:")
    return _this[1] + secrets.token_hex(16)


def holder_gone(token: str) -> bool:
    """Whether the process that took a lease with `token` is known to have ended (False when unsure)."""
    parts = token.split(":")
    if len(parts) != 4 or parts[0] != _machine() or not parts[1].isdigit():
        return False  # another machine's, or an older form: wait for it to run out
    pid, started = int(parts[1]), parts[2]
    if pid == os.getpid():
        return False
    now = _started(pid)
    return now is None or bool(started and now and now != started)
