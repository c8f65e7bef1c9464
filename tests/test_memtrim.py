"""The allocator tuning and trim (purplemux/io/memtrim.py) work on this system, in a fresh process
(tune must come before threads allocate), and leave it working: big blocks come and go."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import platform, threading
from purplemux.io import memtrim
glibc = platform.libc_ver()[0] == "glibc"
assert memtrim.tune() is glibc, "tune"
blocks = [bytearray(1 << 20) for _ in range(64)]
worker = threading.Thread(target=lambda: [bytearray(1 << 20) for _ in range(16)])
worker.start(); worker.join()
del blocks
assert memtrim.give_back() is glibc, "give_back"
print("ok")
"""


def test_tune_and_give_back_in_a_fresh_process() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
