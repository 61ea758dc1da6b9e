"""`delegator research QUESTION` and `delegator ingest PATH`."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Mapping
from contextlib import nullcontext
from pathlib import Path
from typing import Any, cast

import openai
from rich.console import Console

from cli.progress import RunProgress
from graphs.research import graph
from runtime.context import ConfigError, Context
from runtime.corpus import CorpusError
from runtime.kb import DEFAULT_KB_PATH, KnowledgeBaseError, build_default, ingest
from runtime.local_engine import LocalModelError
from runtime.models import ModelSpecError, ModelTimeoutError
from runtime.reliability import describe
from runtime.structured import ModelOutputError
from state.graph import ResearchState
from state.question import QuestionError, check_question
from state.report import Report
from subagents.registry import DefinitionError

EXIT_BAD_INPUT = 2
"""Bad input: the question, a setting, a model spec, the knowledge base."""
EXIT_INCOMPLETE = 3
"""The run finished, but every task failed or the model endpoint was lost."""

USER_ERRORS = (
    LocalModelError,
    QuestionError,
    ConfigError,
    KnowledgeBaseError,
    CorpusError,
    DefinitionError,
    ModelSpecError,
    ModelOutputError,
    ModelTimeoutError,
)


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
    return cli


def main(argv: list[str] | None = None) -> int:
    """Run the command; user errors print one line and exit 2."""
    args = parser().parse_args(argv)
    err = Console(stderr=True, log_path=False)
    try:
        if args.command == "ingest":
            return run_ingest(args, err)
        return run_research(args, err)
    except USER_ERRORS as error:
        err.print(f"[red]error:[/] {describe(error)}")
        return EXIT_BAD_INPUT
    except openai.APIError as error:
        err.print(f"[red]error:[/] the model endpoint failed: {describe(error)}")
        return EXIT_BAD_INPUT


def run_ingest(args: argparse.Namespace, err: Console) -> int:
    """Build or extend a knowledge base."""
    if not args.paths:
        path = build_default()
        err.print(f"built the shipped corpus index at {path}")
        return 0
    docs, passages = ingest(args.kb, args.paths)
    err.print(f"added {docs} document(s), {passages} passage(s) to {args.kb}")
    return 0


def run_research(args: argparse.Namespace, err: Console) -> int:
    """Research one question and print the report."""
    question = check_question(args.question)
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
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report.markdown, encoding="utf-8")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(result_json(state, seconds), indent=2), encoding="utf-8"
        )
    sys.stdout.write(report.markdown)
    if report.summary.incomplete:
        err.print(f"[red]incomplete:[/] {report.summary.incomplete}")
        return EXIT_INCOMPLETE
    if not args.quiet:
        err.print(f"done in {seconds:.1f}s")
    return 0


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
