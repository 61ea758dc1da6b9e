"""Run every benchmark and write one table to benchmarks/RESULTS.md.

`python -m benchmarks.run` from the repository root (or `make bench`). Each
measurement runs in a fresh subprocess so that its peak memory is its own.
Timings are reported, never judged.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from benchmarks.fakes import LATENCY_S
from tests.postgres import throwaway_server

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "RESULTS.md"
ORCHESTRATION_NS = (1, 8, 32, 128, 512)
FAN_OUT_N = 1024
CHECKPOINTER_N = 32
RUNS = 5
CHECKPOINTER_RUNS = 7
"""More runs than elsewhere: the savers differ by less than the run-to-run noise."""
SAVERS = {
    "memory": "InMemorySaver (baseline)",
    "sqlite": "AsyncSqliteSaver (temp file)",
    "postgres": "AsyncPostgresSaver (local server)",
}
Row = tuple[str, str, str, str, str, str]
HEADER: Row = ("Benchmark", "Case", "Wall time", "Relative", "Peak memory", "Other")


def measure(module: str, *args: str, timeout: float = 900.0) -> dict[str, Any]:
    """Run `python -m benchmarks.<module> args` and read its JSON line.

    A failure is returned as `{"error": ...}`, never raised.
    """
    cmd = [sys.executable, "-m", f"benchmarks.{module}", *args]
    say(" ".join(cmd[2:]))
    try:
        done = subprocess.run(
            cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return {"error": f"no answer within {timeout:g}s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode == 0 and lines:
        try:
            result: dict[str, Any] = json.loads(lines[-1])
            return result
        except json.JSONDecodeError:
            pass
    tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": f"exit {done.returncode}: {tail[:200]}"}


def say(text: str) -> None:
    """Show progress on stderr."""
    print(f"[bench] {text}", file=sys.stderr, flush=True)


def secs(value: float) -> str:
    """Seconds, to the millisecond."""
    return f"{value:.3f} s"


def mib(value: float) -> str:
    """Memory in MiB."""
    return f"{value:.1f} MiB"


def failed(result: dict[str, Any]) -> str | None:
    """The error of a failed measurement, as a table cell; None if it ran."""
    return f"failed: {result['error']}" if "error" in result else None


def calls(n: int) -> str:
    """'1 call', '3 calls'."""
    return f"{n} call" + ("" if n == 1 else "s")


def critical_calls(result: dict[str, Any]) -> int:
    """Fake model calls on a run's critical path: the lead's, then one subagent's.

    delegator: subagent, breadth check, opening; deepagents: main agent,
    subagent, main agent. Counted from the lead's calls in the timed runs.
    """
    runs: int = result["expected_calls"] // result["n"]
    lead: int = result["lead_calls"]
    return lead // runs + 1


def spread(result: dict[str, Any]) -> str:
    """The range of the timed runs' wall times."""
    walls = result["walls_s"]
    return f"runs {min(walls):.3f}-{max(walls):.3f} s"


def checked(result: dict[str, Any], what: str) -> str:
    """How many of the expected subagent results and model calls happened."""
    n, runs = result["n"], result["expected_calls"] // result["n"]
    calls = f"{result['model_calls']}/{result['expected_calls']} subagent calls"
    mark = "" if result["covered"] == n and result["model_calls"] == n * runs else " ✗"
    return f"{result['covered']}/{n} {what} per run; {calls}{mark}"


def orchestration() -> list[Row]:
    """Benchmark 1: delegator against deepagents at a few fan-out widths."""
    rows: list[Row] = []
    for n in ORCHESTRATION_NS:
        for system in ("delegator", "deepagents"):
            result = measure(f"{system}_run", "--n", str(n), "--runs", str(RUNS))
            case = f"{system}, N={n}"
            if error := failed(result):
                rows.append(("1. Orchestration", case, error, "", "", ""))
                continue
            critical = critical_calls(result)
            path = critical * LATENCY_S
            wall = result["median_s"]
            what = "values verified" if system == "delegator" else "task reports"
            rows.append(
                (
                    "1. Orchestration",
                    case,
                    f"{secs(wall)} (median of {RUNS})",
                    f"{wall / path:.2f}x critical path "
                    f"({calls(critical)}, {path:.1f} s)",
                    mib(result["peak_mib"]),
                    f"overhead {wall - path:.3f} s; {spread(result)}; "
                    f"{checked(result, what)}",
                )
            )
    return rows


def fan_out(baseline_mib: float | None) -> list[Row]:
    """Benchmark 2: one delegator round of FAN_OUT_N subagents."""
    result = measure("delegator_run", "--n", str(FAN_OUT_N), "--runs", "1")
    case = f"delegator, N={FAN_OUT_N}, max_parallel={FAN_OUT_N}"
    if error := failed(result):
        return [("2. Fan-out scale", case, error, "", "", "")]
    wall, peak = result["median_s"], result["peak_mib"]
    critical = critical_calls(result)
    per = "n/a (the N=1 baseline failed)"
    if baseline_mib is not None:
        per = (
            f"{(peak - baseline_mib) / FAN_OUT_N * 1024:.0f} KiB per subagent "
            f"((peak - N=1 peak {mib(baseline_mib)}) / N)"
        )
    return [
        (
            "2. Fan-out scale",
            case,
            f"{secs(wall)} (1 run)",
            f"{wall / (critical * LATENCY_S):.1f}x critical path "
            f"({calls(critical)}, {critical * LATENCY_S:.1f} s)",
            mib(peak),
            f"{per}; {checked(result, 'values verified')}",
        )
    ]


def checkpointers(postgres: Callable[[], AbstractContextManager[str]]) -> list[Row]:
    """Benchmark 3: the N=32 delegator round on each checkpointer."""
    results: dict[str, dict[str, Any]] = {}
    for kind in SAVERS:
        args = ["--n", str(CHECKPOINTER_N), "--runs", str(CHECKPOINTER_RUNS)]
        args += ["--checkpointer", kind]
        if kind == "postgres":
            try:
                with postgres() as url:
                    results[kind] = measure("delegator_run", *args, "--url", url)
            except Exception as err:  # noqa: BLE001 - reported in the table
                results[kind] = {"error": f"no PostgreSQL server: {err}"[:200]}
        else:
            results[kind] = measure("delegator_run", *args)
    base = results["memory"]
    rows: list[Row] = []
    for kind, label in SAVERS.items():
        result = results[kind]
        name = f"3. Checkpointer cost (N={CHECKPOINTER_N}; ratios to in-memory)"
        if error := failed(result) or failed(base):
            rows.append((name, label, error, "", "", ""))
            continue
        wall, peak = result["median_s"], result["peak_mib"]
        rows.append(
            (
                name,
                label,
                f"{secs(wall)} (median of {CHECKPOINTER_RUNS})",
                f"{wall / base['median_s']:.2f}x in-memory wall time",
                f"{peak / base['peak_mib']:.2f}x in-memory ({mib(peak)})",
                f"{spread(result)}; {checked(result, 'values verified')}",
            )
        )
    return rows


def knowledge_base() -> list[Row]:
    """Benchmark 4: ingest and search of the shipped FreshWiki corpus."""
    result = measure("kb_run")
    if error := failed(result):
        return [("4. Knowledge base", "FreshWiki", error, "", "", "")]
    name = "4. Knowledge base (FreshWiki)"
    return [
        (
            name,
            "ingest into a new file",
            secs(result["ingest_s"]),
            "",
            mib(result["peak_mib"]),
            f"{result['documents']} documents, {result['passages']} passages; "
            f"index {result['index_mib']:.2f} MiB",
        ),
        (
            name,
            f"search, k=5, {result['queries']} queries of title words",
            f"p50 {result['search_p50_ms']:.2f} ms, "
            f"p95 {result['search_p95_ms']:.2f} ms",
            "",
            "(same process)",
            f"{result['hits_per_query']} hits per query",
        ),
    ]


def unfinished(name: str, case: str, result: dict[str, Any]) -> Row | None:
    """The row of a CLI run that did not finish; None if it did."""
    if "skipped" in result:
        return (name, case, f"skipped: {result['skipped']}", "", "", "")
    if "timed_out_s" in result:
        limit = result["timed_out_s"]
        return (name, case, f"timed out after {limit:.0f} s", "", "", "")
    if error := failed(result):
        return (name, case, error, "", "", "")
    return None


def outcome(result: dict[str, Any]) -> str:
    """What a CLI run found: tasks, findings, coverage, and why it is incomplete."""
    found = (
        f"{result['tasks']} tasks, {result['findings']} findings, "
        f"coverage {result['coverage']:.2f}"
    )
    why = result["incomplete"]
    return f"{found}; incomplete: {why}" if why else found


def end_to_end(question: str) -> list[Row]:
    """Benchmark 5: whole CLI runs, extractive and on a local model."""
    name = "5. End to end (`delegator research`)"
    result = measure("e2e_run", "extractive", "--question", question)
    case = "extractive lead and subagents (default rounds)"
    extractive = unfinished(name, case, result) or (
        name,
        case,
        secs(result["wall_s"]),
        "",
        mib(result["child_peak_mib"]) + " (child)",
        outcome(result),
    )
    result = measure("e2e_run", "local", "--question", question, timeout=600)
    case = "local qwen2.5-coder-0.5b q4 (--max-rounds 0 --max-subagents 2)"
    local = unfinished(name, case, result)
    if local is None:
        roles = ", ".join(f"{r} {t}" for r, t in result["tokens_by_role"].items())
        local = (
            name,
            case,
            secs(result["wall_s"]),
            f"{result['tokens_per_s']:.1f} tokens/s "
            f"({result['tokens']} prompt + completion tokens / wall)",
            mib(result["child_peak_mib"]) + " (child)",
            f"tokens by role: {roles}; {outcome(result)}",
        )
    return [extractive, local]


def table(rows: list[Row]) -> str:
    """The rows as one Markdown table."""
    lines = [HEADER, ("---",) * len(HEADER), *rows]
    return "\n".join(
        "| " + " | ".join(c.replace("|", "\\|") for c in line) + " |" for line in lines
    )


def package_version(name: str) -> str:
    """The installed version of a distribution, or 'not installed'."""
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def makefile_question() -> str:
    """The Makefile's QUESTION."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    found = re.search(r"^QUESTION \?= (.+)$", text, re.MULTILINE)
    if found is None:
        raise SystemExit("no QUESTION in the Makefile; pass --question")
    return found.group(1).strip()


def report(rows: list[Row], took_s: float) -> str:
    """RESULTS.md: its heading, the table, and how to read it."""
    today = datetime.date.today().isoformat()
    return f"""# Benchmarks

{today}; {os.cpu_count()} cores (os.cpu_count()); langgraph \
{package_version("langgraph")}; deepagents {package_version("deepagents")}; \
Python {sys.version.split()[0]}. `make bench` took {took_s:.0f} s.

{table(rows)}

Every fake model call sleeps {LATENCY_S:.1f} s, for every role. Critical path:
the longest chain of model calls times {LATENCY_S:.1f} s, counted from the
calls made (delegator: subagent, the lead's breadth check, the lead's opening;
deepagents: main agent, subagent, main agent). Wall times cover the graph run
only: delegator's plan is written to its thread as `dispatch` would leave it
(the planner is skipped: a model's plan has at most 12 facets), and both
systems checkpoint to an InMemorySaver unless benchmark 3 says otherwise. Before
each timed run both settle the interpreter as `delegator research` does before
its run (`runtime.interpreter.settle_interpreter`: live objects frozen, young
collections every 10,000 allocations, threads switched every 1 ms). Peak memory
is the peak resident set (ru_maxrss) of the measuring process, which warms up
with an N=1 run before its timed runs. PostgreSQL runs with fsync off (the test
fixture's settings). A ✗ marks a run whose subagent results or calls were not
all there.
"""


KEPT = "<!-- kept by make bench: measured by hand with delegator eval -->"
"""Below this line RESULTS.md holds figures `make bench` does not measure."""


def kept(previous: str) -> str:
    """The part of the previous RESULTS.md that `make bench` keeps as it was."""
    _, marker, tail = previous.partition(KEPT)
    return f"\n{marker}{tail}" if marker else ""


def main() -> None:
    """Run the benchmarks, print the table, write RESULTS.md."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--question", default="", help="end-to-end question")
    args = parser.parse_args()
    question = args.question or makefile_question()
    started = time.perf_counter()
    rows = orchestration()
    baseline = measure("delegator_run", "--n", "1", "--runs", "1")
    rows += fan_out(baseline.get("peak_mib"))
    rows += checkpointers(throwaway_server)
    rows += knowledge_base()
    rows += end_to_end(question)
    text = report(rows, time.perf_counter() - started)
    old = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else ""
    RESULTS.write_text(text + kept(old), encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
