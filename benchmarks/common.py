"""What every measuring subprocess shares: its peak memory and its JSON answer."""

from __future__ import annotations

import json
import resource
import statistics
import sys
from collections.abc import Sequence
from typing import Any


def peak_mib(who: int = resource.RUSAGE_SELF) -> float:
    """The peak resident memory of this process (or its children), in MiB."""
    kib = resource.getrusage(who).ru_maxrss  # KiB on Linux
    return round(kib / 1024, 1)


def median(values: Sequence[float]) -> float:
    """The median, rounded to the millisecond."""
    return round(statistics.median(values), 3)


def answer(result: dict[str, Any]) -> None:
    """Print the measurement as the last line of stdout, for the parent to read."""
    sys.stdout.flush()
    print(json.dumps(result), flush=True)
