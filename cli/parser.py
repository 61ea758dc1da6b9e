"""The `delegator` command line: research, resume, fork, and the other commands."""

from __future__ import annotations

import argparse
from pathlib import Path

from runtime.checkpoints import DEFAULT_RUNS_DB
from runtime.context import ROUTINGS
from runtime.kb import DEFAULT_KB_PATH

DEFAULT_JOBS = 10


def add_set_option(options: argparse.ArgumentParser) -> None:
    """`--set FIELD=VALUE`: any context setting, for a run or an eval."""
    options.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="any run setting by its context field, e.g. --set "
        "task_token_budget=20000 (repeat it; the README's settings table lists "
        "them; a flag of its own wins)",
    )


def store_options() -> argparse.ArgumentParser:
    """Where runs are checkpointed."""
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument(
        "--db",
        type=Path,
        default=DEFAULT_RUNS_DB,
        help=f"SQLite file of run checkpoints (default {DEFAULT_RUNS_DB})",
    )
    options.add_argument(
        "--checkpointer",
        metavar="URL",
        help="checkpoint to PostgreSQL at this postgresql:// URL instead",
    )
    options.add_argument(
        "--debug", action="store_true", help="show the traceback of a failure"
    )
    return options


def run_options() -> argparse.ArgumentParser:
    """What every run takes: models, limits, agents, outputs, escalation."""
    options = argparse.ArgumentParser(add_help=False, parents=[store_options()])
    add = options.add_argument
    add("--lead-model", help="model spec of the lead (default auto)")
    add("--subagent-model", help="model spec of subagents (default auto)")
    add("--max-rounds", type=int, help="re-delegation rounds; 0 disables (default 3)")
    add(
        "--max-parallel",
        type=int,
        help="subagents working at once (default: from the endpoint)",
    )
    add("--max-subagents", type=int, help="facets planned and tasks per round (5)")
    add("--kb", help="knowledge base file")
    add("--agents", metavar="DIR", help="a folder of your own subagent definitions")
    add(
        "--mcp-config",
        metavar="FILE",
        help='MCP servers ({"mcpServers": ...}) whose tools agents may name',
    )
    add("--routing", choices=ROUTINGS, help="how facets get agents (capability)")
    add("--verifier", help="a definition to run as verifier, e.g. fact_checker")
    add(
        "--approve-plan",
        action="store_true",
        help="pause after planning for a person to accept, edit or extend the plan",
    )
    add_set_option(options)
    add("--out", type=Path, help="write the Markdown report here")
    add("--json", type=Path, help="write the full result here")
    add("--html", type=Path, help="write the report as one self-contained page here")
    add("--quiet", action="store_true", help="no progress display")
    add(
        "--no-interrupt",
        action="store_true",
        help="never stop for a person: a branch that cannot go on is skipped",
    )
    add(
        "--decision",
        help="answer to a run waiting for a person: retry, skip, abort, "
        "'hint: <text>', 'accept' (a plan) or a JSON object",
    )
    return options


def positive(text: str) -> int:
    """A whole number of 1 or more, or argparse's one-line error."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {number}")
    return number


def parser() -> argparse.ArgumentParser:
    """The command line."""
    cli = argparse.ArgumentParser(prog="delegator")
    sub = cli.add_subparsers(dest="command", required=True)
    runs = run_options()

    research = sub.add_parser(
        "research", parents=[runs], help="answer a broad question"
    )
    research.add_argument(
        "question", nargs="?", help="the question; leave out to resume --thread"
    )
    research.add_argument(
        "--thread",
        help="the run's thread id: a new one starts there, one holding an "
        "unfinished run resumes (default: a new id)",
    )

    resume = sub.add_parser(
        "resume", parents=[runs], help="resume a thread's unfinished run"
    )
    resume.add_argument("thread", help="the thread to resume")

    fork = sub.add_parser(
        "fork",
        parents=[runs],
        help="start a divergent run from a checkpoint of another thread",
    )
    fork.add_argument("source", metavar="THREAD", help="the thread to fork")
    fork.add_argument("--checkpoint", help="the checkpoint to fork (default: last)")
    change = fork.add_mutually_exclusive_group()
    change.add_argument("--question", help="ask this question on the fork instead")
    change.add_argument(
        "--plan", type=Path, help="a plan (JSON) for the fork to send out instead"
    )
    fork.add_argument("--thread", help="the fork's thread id (default: a new id)")

    history = sub.add_parser(
        "history", parents=[store_options()], help="list a thread's checkpoints"
    )
    history.add_argument("thread", help="the thread whose checkpoints to list")

    evaluate = sub.add_parser("eval", help="run an eval dataset and score it")
    evaluate.add_argument(
        "--dataset",
        default="breadth",
        help="breadth (the shipped dev cases), tuning (cases whose first round "
        "misses kinds), heldout (breadth questions of other kinds), outlines (one "
        "per FreshWiki article) or a path to a breadth dataset file",
    )
    evaluate.add_argument("--lead-model", help="model spec of the lead")
    evaluate.add_argument("--subagent-model", help="model spec of subagents")
    evaluate.add_argument(
        "--ablation",
        action="store_true",
        help="run each case without and with re-delegation",
    )
    evaluate.add_argument("--max-rounds", type=int, help="re-delegation rounds (3)")
    evaluate.add_argument(
        "--limit", type=positive, help="run only the first N cases (1 or more)"
    )
    evaluate.add_argument(
        "--concurrency",
        type=positive,
        default=2,
        help="cases run at once (default 2; no more than a local engine's slots)",
    )
    evaluate.add_argument("--kb", help="knowledge base of breadth cases")
    add_set_option(evaluate)
    evaluate.add_argument("--json", type=Path, help="write every score here")
    evaluate.add_argument("--html", type=Path, help="write the scores as a page here")
    evaluate.add_argument(
        "--debug", action="store_true", help="show the traceback of a failure"
    )

    show = sub.add_parser("show", help="turn a result JSON into a page")
    show.add_argument("result", type=Path, help="a result written with --json")
    show.add_argument("--html", type=Path, required=True, help="the page to write")
    show.add_argument(
        "--debug", action="store_true", help="show the traceback of a failure"
    )

    serve = sub.add_parser(
        "serve", help="serve the graphs over the LangGraph Server API (and Studio)"
    )
    serve.add_argument("--port", type=int, default=2024, help="port (default 2024)")
    serve.add_argument("--host", default="127.0.0.1", help="interface (127.0.0.1)")
    serve.add_argument(
        "--jobs",
        type=int,
        default=DEFAULT_JOBS,
        help=f"runs served at once (default {DEFAULT_JOBS}), so one slow run "
        "holds no other back",
    )
    serve.add_argument(
        "--debug", action="store_true", help="show the traceback of a failure"
    )

    ingest = sub.add_parser("ingest", help="add documents to the knowledge base")
    ingest.add_argument(
        "paths",
        nargs="*",
        type=Path,
        help="files or folders; none rebuilds the shipped corpus",
    )
    ingest.add_argument("--kb", type=Path, default=DEFAULT_KB_PATH)
    ingest.add_argument(
        "--debug", action="store_true", help="show the traceback of a failure"
    )
    return cli
