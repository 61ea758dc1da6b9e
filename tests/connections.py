"""Which remote addresses a process tree's TCP sockets talk to, read from /proc."""

from __future__ import annotations

import ipaddress
import os
import threading
from pathlib import Path

LISTEN = "0A"


def descendants(root: int) -> set[int]:
    """`root` and every process below it."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    tree, grew = {root}, True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grew = True
    return tree


def socket_inodes(pids: set[int]) -> set[str]:
    """The socket inodes these processes hold open."""
    inodes: set[str] = set()
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    return inodes


def _address(hex_address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    raw = bytes.fromhex(hex_address)
    if len(raw) == 4:
        return ipaddress.IPv4Address(raw[::-1])
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
    return ipaddress.IPv6Address(words)


def remote_addresses(root: int) -> set[str]:
    """The remote addresses of the tree's connected TCP sockets."""
    inodes = socket_inodes(descendants(root))
    remote: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[9] in inodes and fields[3] != LISTEN:
                remote.add(str(_address(fields[2].split(":")[0])))
    return remote


def is_loopback(address: str) -> bool:
    """Whether an address is this machine's loopback (or unspecified)."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_unspecified


class Watch:
    """Samples a process tree's remote addresses in the background."""

    def __init__(self, root: int, every_s: float = 0.1) -> None:
        self.root, self.every_s = root, every_s
        self.seen: set[str] = set()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stopped.wait(self.every_s):
            self.seen |= remote_addresses(self.root)

    def outside(self) -> set[str]:
        """Every address seen that is not loopback; stops the watch."""
        self.stopped.set()
        self.thread.join()
        return {a for a in self.seen if not is_loopback(a)}
