"""A whole `delegator research` run as a child process: `python -m benchmarks.e2e_run`.

`extractive` runs with no model at all; `local` runs lead and subagents on a
local GGUF model (one round, two subagents). The run reads a fresh index of
the shipped corpus and checkpoints to a temporary file. Prints one JSON line:
the wall time, the child's peak memory and, from the run's JSON result, its
tokens.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import answer, peak_mib
from runtime.kb import DEFAULT_CORPUS, ingest

LOCAL_MODEL = Path("/root/.cache/delegator-models/qwen2.5-coder-0.5b-instruct-q4.gguf")
LOCAL_TIMEOUT_S = 480.0
EXTRACTIVE_TIMEOUT_S = 300.0
FINISHED = (0, 3)
"""Exit codes of a run that wrote its report: complete, and incomplete."""


def command(question: str, mode: str, folder: Path) -> list[str]:
    """The `delegator research` command line of this mode."""
    exe = str(Path(sys.executable).parent / "delegator")
    args = [exe, "research", question, "--quiet", "--db", str(folder / "runs.db")]
    args += ["--kb", str(folder / "kb.sqlite"), "--json", str(folder / "result.json")]
    if mode == "extractive":
        return [*args, "--lead-model", "extractive", "--subagent-model", "extractive"]
    spec = f"local:{LOCAL_MODEL}"
    return [
        *args,
        *("--lead-model", spec, "--subagent-model", spec),
        *("--max-rounds", "0", "--max-subagents", "2"),
    ]


def measure(question: str, mode: str) -> dict[str, Any]:
    """Run the command once, within its timeout."""
    if mode == "local" and not LOCAL_MODEL.is_file():
        return {"mode": mode, "skipped": "model file not present"}
    timeout = LOCAL_TIMEOUT_S if mode == "local" else EXTRACTIVE_TIMEOUT_S
    env = dict(os.environ, DELEGATOR_MODEL_DIRS=str(LOCAL_MODEL.parent))
    with tempfile.TemporaryDirectory(prefix="delegator-bench-e2e-") as tmp:
        folder = Path(tmp)
        ingest(folder / "kb.sqlite", [DEFAULT_CORPUS])
        started = time.perf_counter()
        child = subprocess.Popen(
            command(question, mode, folder),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            out, err = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            return {"mode": mode, "timed_out_s": timeout}
        wall = time.perf_counter() - started
        result: dict[str, Any] = {
            "mode": mode,
            "wall_s": round(wall, 3),
            "peak_mib": peak_mib(),
            "child_peak_mib": peak_mib(-1),  # RUSAGE_CHILDREN
            "returncode": child.returncode,
        }
        if child.returncode not in FINISHED:
            lines = (err or out).strip().splitlines() or ["no output"]
            result["error"] = f"exit {child.returncode}: {lines[-1][:200]}"
            return result
        summary = json.loads((folder / "result.json").read_text())["summary"]
    result |= {
        "incomplete": summary["incomplete"],
        "tokens": summary["tokens"],
        "tokens_by_role": summary["tokens_by_role"],
        "tokens_per_s": round(summary["tokens"] / wall, 1),
        "coverage": summary["coverage"],
        "tasks": summary["tasks"],
        "findings": summary["findings"],
    }
    return result


def main() -> None:
    """Parse the arguments, measure, print the JSON line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mode", choices=("extractive", "local"))
    parser.add_argument("--question", required=True)
    args = parser.parse_args()
    answer(measure(args.question, args.mode))


if __name__ == "__main__":
    main()
