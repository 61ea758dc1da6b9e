"""`delegator research QUESTION` and `delegator ingest PATH`."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from pathlib import Path
from typing import Any, cast

from rich.console import Console
from rich.markup import escape

from cli import exits
from cli.progress import RunProgress
from graphs.research import graph
from runtime.context import Context
from runtime.kb import DEFAULT_KB_PATH, build_default, ingest
from runtime.reliability import describe
from state.graph import ResearchState
from state.question import check_question
from state.report import Report


def parser() -> argparse.ArgumentParser:
    """The command line."""
    cli = argparse.ArgumentParser(prog="delegator", description=__doc__)
    sub = cli.add_subparsers(dest="command", required=True)

    research = sub.add_parser("research", help="answer a broad question")
    research.add_argument("question")
    research.add_argument("--lead-model", help="model spec of the lead (default auto)")
    research.add_argument(
        "--subagent-model", help="model spec of subagents (default auto)"
    )
    research.add_argument(
        "--max-rounds", type=int, help="re-delegation rounds; 0 disables (default 3)"
    )
    research.add_argument(
        "--max-parallel", type=int, help="subagents working at once (default 4)"
    )
    research.add_argument(
        "--max-subagents",
        type=int,
        help="facets planned and tasks per round (default 5)",
    )
    research.add_argument("--kb", help="knowledge base file")
    research.add_argument("--out", type=Path, help="write the Markdown report here")
    research.add_argument("--json", type=Path, help="write the full result here")
    research.add_argument("--quiet", action="store_true", help="no progress display")

    ingest_cmd = sub.add_parser("ingest", help="add documents to the knowledge base")
    ingest_cmd.add_argument(
        "paths",
        nargs="*",
        type=Path,
        help="files or folders; none rebuilds the shipped corpus",
    )
    ingest_cmd.add_argument("--kb", type=Path, default=DEFAULT_KB_PATH)
    for command in (research, ingest_cmd):
        command.add_argument(
            "--debug", action="store_true", help="show the traceback of a failure"
        )
    return cli


def main(argv: list[str] | None = None) -> int:
    """Run the command; every failure ends with one `error:` line and its code."""
    args = parser().parse_args(argv)
    err = Console(stderr=True, log_path=False)
    try:
        if args.command == "ingest":
            return run_ingest(args, err)
        return run_research(args, err)
    except KeyboardInterrupt:
        err.print("[red]interrupted[/]")
        return exits.INTERRUPTED
    except Exception as error:  # noqa: BLE001 - the one place failures are told
        if args.debug:
            raise
        code, line = exits.failure(error)
        err.print(f"[red]error:[/] {escape(line)}", soft_wrap=True)
        return code


def run_ingest(args: argparse.Namespace, err: Console) -> int:
    """Build or extend a knowledge base."""
    if not args.paths:
        path = build_default()
        err.print(f"built the shipped corpus index at {path}")
        return 0
    refuse_overwriting([args.kb], args.paths)
    result = ingest(args.kb, args.paths)
    err.print(
        f"added {result.documents} document(s), {result.passages} passage(s)"
        f" to {args.kb}"
    )
    if result.skipped:
        err.print(f"skipped {len(result.skipped)} file(s):")
    for skipped in result.skipped:
        err.print(f"  {skipped.path}: {skipped.reason}", markup=False, soft_wrap=True)
    return 0


def run_research(args: argparse.Namespace, err: Console) -> int:
    """Research one question and print the report."""
    question = check_question(args.question)
    outputs = [p for p in (args.out, args.json) if p is not None]
    refuse_overwriting(outputs, [Path(args.kb or DEFAULT_KB_PATH)])
    given = {
        "lead_model": args.lead_model,
        "subagent_model": args.subagent_model,
        "kb_path": args.kb,
        "max_rounds": args.max_rounds,
        "max_subagents": args.max_subagents,
        "max_parallel": args.max_parallel,
    }
    context = Context(**{k: v for k, v in given.items() if v is not None})
    started = time.perf_counter()
    state = asyncio.run(research(question, context, args.quiet, err))
    seconds = time.perf_counter() - started
    report = report_of(state)
    sys.stdout.write(report.markdown)
    sys.stdout.flush()
    files: list[tuple[Path | None, Callable[[], str]]] = [
        (args.out, lambda: report.markdown),
        (args.json, lambda: json.dumps(result_json(state, seconds), indent=2)),
    ]
    unwritten = [path for path, text in files if path and not save(path, text(), err)]
    if report.summary.incomplete:
        err.print(f"[red]incomplete:[/] {escape(report.summary.incomplete)}")
        return exits.INCOMPLETE
    if unwritten:
        return exits.DATA
    if not args.quiet:
        err.print(f"done in {seconds:.1f}s")
    return exits.OK


def refuse_overwriting(outputs: list[Path], inputs: list[Path]) -> None:
    """Refuse an output path that is one of the inputs (the knowledge base...)."""
    taken = {p.expanduser().resolve() for p in inputs}
    for path in outputs:
        if path.expanduser().resolve() in taken:
            raise exits.OutputPathError(f"{path} is an input; choose another output")


def save(path: Path, text: str, err: Console) -> bool:
    """Write an output, telling a failure on one line that names the file."""
    try:
        write_atomically(path, text)
    except OSError as error:
        line = f"could not write {path}: {describe(error)}"
        err.print(f"[red]error:[/] {escape(line)}", soft_wrap=True)
        return False
    return True


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, then rename it over `path`.

    A reader sees the old file or the new one, never half of one.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


async def research(
    question: str, context: Context, quiet: bool, err: Console
) -> ResearchState:
    """Stream a run, drawing progress unless quiet, and return its final state."""
    final: ResearchState = {}
    progress = None if quiet else RunProgress(err)
    with progress or nullcontext():
        async for mode, chunk in graph.astream(
            {"question": question},
            context=context,
            stream_mode=["custom", "values"],
        ):
            if mode == "values":
                final = cast(ResearchState, chunk)
            elif progress is not None:
                progress.on_event(cast(Mapping[str, Any], chunk))
    return final


def report_of(state: ResearchState) -> Report:
    """The report of a finished run."""
    report = state.get("report")
    if report is None:
        raise RuntimeError("the run ended without a report")
    return report


def result_json(state: ResearchState, seconds: float) -> dict[str, Any]:
    """Everything a run produced, as JSON-ready data."""
    report = report_of(state)
    return {
        "question": state["question"],
        "report": report.markdown,
        "plan": state["plan"].model_dump(mode="json"),
        "findings": [f.model_dump(mode="json") for f in state.get("findings", [])],
        "coverage": [c.model_dump(mode="json") for c in state.get("coverage", [])],
        "coverage_table": [r.model_dump(mode="json") for r in report.coverage_table],
        "uncovered": list(report.unresolved_gaps),
        "tasks": [r.model_dump(mode="json") for r in state.get("results", {}).values()],
        "summary": {**report.summary.model_dump(mode="json"), "wall_seconds": seconds},
        "events": [e.model_dump(mode="json") for e in state.get("events", [])],
    }


if __name__ == "__main__":
    sys.exit(main())
