"""The `delegator` command: research, resume, fork, history, show, eval, serve, ingest.

Every failure ends with one `error:` line and its exit code (`cli.exits`).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import io
import json
import os
import signal
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.prompt import Prompt

from cli import exits
from cli.outputs import check_outputs, write_atomically
from cli.parser import parser
from cli.runs import (
    Ask,
    EscalatedError,
    ForkFrom,
    RunRequest,
    ThreadError,
    run_thread,
    thread_history,
)
from cli.serve import serve
from evals.datasets import load_breadth, outline_cases
from evals.langsmith_upload import publish
from evals.runner import evaluate, table
from presentation.page import eval_page, report_page
from runtime.context import Context, given_settings
from runtime.kb import DEFAULT_KB_PATH, build_default, ingest, knowledge_base
from runtime.local_engine import stop_engines
from runtime.paths import read_input
from runtime.reliability import describe
from runtime.sources import Sources
from runtime.text import printable
from state.graph import ResearchState
from state.handoff import ACTIONS
from state.question import QuestionError, check_question
from state.report import Report, RunSummary
from state.result import RunResult
from state.tasks import tool_evidence


def main(argv: list[str] | None = None) -> int:
    """Run the command; every failure ends with one `error:` line and its code."""
    args = parser().parse_args(argv)
    code = command(args, Console(stderr=True, log_path=False, emoji=False))
    stop_engines(code)
    return code


def command(args: argparse.Namespace, err: Console) -> int:
    """Run the command `args` name, telling a failure on one line."""
    try:
        if args.command == "ingest":
            return run_ingest(args, err)
        if args.command == "history":
            return run_history(args, err)
        if args.command == "show":
            return run_show(args, err)
        if args.command == "eval":
            return run_eval(args, err)
        if args.command == "serve":
            serve(args.port, args.host, args.jobs)
        return run_research(args, err)
    except KeyboardInterrupt:
        err.print("[red]interrupted[/]")
        return exits.INTERRUPTED
    except Exception as error:  # noqa: BLE001 - the one place failures are told
        if args.debug:
            err.print_exception()
        code, line = exits.failure(error)
        err.print(f"[red]error:[/] {escape(line)}", soft_wrap=True)
        return code


def run_ingest(args: argparse.Namespace, err: Console) -> int:
    """Build or extend a knowledge base."""
    if not args.paths:
        path = build_default()
        err.print(f"built the shipped corpus index at {path}")
        return 0
    check_outputs([Path(args.kb)], args.paths)
    result = ingest(args.kb, args.paths)
    err.print(
        f"added {result.documents} document(s), {result.passages} passage(s)"
        f" to {args.kb}"
    )
    if result.skipped:
        err.print(f"skipped {len(result.skipped)} file(s):")
    for skipped in result.skipped:
        err.print(
            printable(f"  {skipped.path}: {skipped.reason}").replace("\n", "\\n"),
            markup=False,
            soft_wrap=True,
        )
    return 0


def run_research(args: argparse.Namespace, err: Console) -> int:
    """Research a question, resume a thread or fork one, and print the report."""
    asked = args.question if args.command != "resume" else None
    question = None if asked is None else check_question(asked)
    thread = args.thread
    if args.command == "research" and question is None and thread is None:
        raise QuestionError("give a question, or --thread to resume a run")
    outputs = [p for p in (args.out, args.json, args.html) if p is not None]
    read = (args.mcp_config, args.agents, getattr(args, "plan", None))
    inputs = [Path(args.kb or DEFAULT_KB_PATH), args.db, *filter(None, read)]
    check_outputs(outputs, inputs)
    given = {
        "lead_model": args.lead_model,
        "subagent_model": args.subagent_model,
        "kb_path": args.kb,
        "agents_dir": args.agents,
        "mcp_config": args.mcp_config,
        "routing": args.routing,
        "verifier": args.verifier,
        "approve_plan": args.approve_plan or None,
        "max_rounds": args.max_rounds,
        "max_subagents": args.max_subagents,
        "max_parallel": args.max_parallel,
        "on_escalation": "skip" if args.no_interrupt else None,
    }
    context = context_of(args.set, given)
    fork = None
    if args.command == "fork":
        fork = ForkFrom(args.source, args.checkpoint, args.plan)
    request = RunRequest(
        question=question,
        context=context,
        thread_id=thread or str(uuid.uuid4()),
        db=args.db,
        checkpointer_url=args.checkpointer,
        decision=args.decision,
        fork=fork,
    )
    ask = ask_person(err) if sys.stdin.isatty() else None
    started = time.perf_counter()
    try:
        with ctrl_c_stops():
            state = asyncio.run(run_thread(request, ask, None if args.quiet else err))
    except KeyboardInterrupt as stopped:
        by = " by SIGTERM" if isinstance(stopped, Terminated) else ""
        err.print(
            f"[red]stopped{by}[/]; nothing checkpointed is lost. {resume(request)}"
        )
        return exits.TERMINATED if by else exits.INTERRUPTED
    except EscalatedError as waiting:
        for handoff in waiting.handoffs:
            err.print_json(data=handoff)
        err.print(
            f"[magenta]waiting for a person[/]: {resume(request)} "
            f"--decision {decisions(waiting.handoffs)}"
        )
        return exits.ESCALATED
    seconds = time.perf_counter() - started
    report = report_of(state)
    # the full result reads every cited passage: built once, and only if written
    result = functools.cache(
        lambda: run_result(state, seconds, request.thread_id, context)
    )
    files: list[tuple[Path | None, Callable[[], str]]] = [
        (args.out, lambda: report.markdown),
        (args.json, lambda: result().model_dump_json(indent=2)),
        (args.html, lambda: report_page(result())),
    ]
    unwritten = [path for path, text in files if path and not save(path, text(), err)]
    to_stdout(report.markdown)
    if report.summary.incomplete:
        err.print(f"[red]incomplete:[/] {escape(report.summary.incomplete)}")
        return exits.INCOMPLETE
    if unwritten:
        return exits.DATA
    if not args.quiet:
        err.print(escape(summary_line(report.summary)), highlight=False)
        err.print(f"done in {seconds:.1f}s; thread {escape(request.thread_id)}")
    return exits.OK


def decisions(handoffs: list[Mapping[str, Any]]) -> str:
    """The decisions a resume may take, for what the run waits on."""
    if all(h.get("kind") == "plan" for h in handoffs):
        return 'accept|\'{"action": "edit" or "add", ...}\''
    return "retry|skip|abort|'hint: <text>'"


def context_of(pairs: list[str], flags: dict[str, Any]) -> Context:
    """The run's context: `--set` pairs, then the flags given, over the defaults."""
    given = given_settings(pairs)
    given.update((k, v) for k, v in flags.items() if v is not None)
    return Context(**given)


def to_stdout(text: str) -> None:
    """Print `text`; a reader that has gone (closed or broken stdout) is no error.

    The run's files are written before: nothing is lost either way.
    """
    if sys.stdout is None or sys.stdout.closed:
        return
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # Python flushes stdout again at exit: point it at nothing first
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


class Terminated(KeyboardInterrupt):
    """SIGTERM (what containers and service managers send): a stop like Ctrl-C."""


@contextmanager
def ctrl_c_stops() -> Iterator[None]:
    """Ctrl-C, or SIGTERM, stops the run where it is, whatever step is running.

    asyncio's own handler only cancels the main task, and a cancellation that
    reaches a subagent's attempt is told as that task's failure; the run would
    then go on. Raising at once stops it: what is checkpointed stays.
    """

    def stop(signum: int, frame: FrameType | None) -> None:
        raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt

    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def save(path: Path, text: str, err: Console) -> bool:
    """Write an output, telling a failure on one line that names the file."""
    try:
        write_atomically(path, text)
    except OSError as error:
        line = f"could not write {path}: {describe(error)}"
        err.print(f"[red]error:[/] {escape(line)}", soft_wrap=True)
        return False
    return True


def resume(request: RunRequest) -> str:
    """The command that resumes the request's thread."""
    where = (
        f" --checkpointer {request.checkpointer_url}"
        if request.checkpointer_url
        else f" --db {request.db}"
    )
    return f"Resume with: delegator resume {request.thread_id}{where}"


def run_eval(args: argparse.Namespace, err: Console) -> int:
    """Run an eval dataset, print its table and write its scores."""
    if args.dataset == "outlines":
        cases: list[Any] = outline_cases()
    elif args.dataset == "breadth":
        cases = load_breadth()
    else:
        cases = load_breadth(Path(args.dataset))
    cases = cases[: args.limit] if args.limit else cases
    given = {
        "lead_model": args.lead_model,
        "subagent_model": args.subagent_model,
        "max_rounds": args.max_rounds,
        "kb_path": args.kb,
        "on_escalation": "skip",
    }
    context = context_of(args.set, given)
    scores = asyncio.run(
        evaluate(
            cases,
            context,
            ablation=args.ablation,
            concurrency=args.concurrency,
            console=err,
        )
    )
    scored = [s.model_dump(mode="json") for s in scores]
    files: list[tuple[Path | None, Callable[[], str]]] = [
        (args.json, lambda: json.dumps(scored, indent=2)),
        (args.html, lambda: eval_page(scored)),
    ]
    unwritten = [path for path, text in files if path and not save(path, text(), err)]
    shown = io.StringIO()
    Console(width=200, file=shown, emoji=False).print(table(scores))
    to_stdout(shown.getvalue())
    settings = {
        "lead_model": context.lead_model,
        "subagent_model": context.subagent_model,
        "max_rounds": context.max_rounds,
        "ablation": args.ablation,
    }
    publish(args.dataset, cases, scores, err, settings)
    return exits.DATA if unwritten else exits.OK


MAX_RESULT_BYTES = 256 * 2**20
"""A result file `show` reads is at most 256 MiB."""


def run_show(args: argparse.Namespace, err: Console) -> int:
    """Write the page of a result already written with --json."""
    check_outputs([args.html], [args.result])
    try:
        result = RunResult.model_validate_json(
            read_input(args.result, MAX_RESULT_BYTES)
        )
        page = report_page(result)
    except ValueError as error:
        raise exits.ResultFileError(
            f"{args.result} is not a result JSON: {error}"
        ) from error
    return exits.OK if save(args.html, page, err) else exits.DATA


def run_history(args: argparse.Namespace, err: Console) -> int:
    """List a thread's checkpoints, newest first, to fork one."""
    checkpoints = asyncio.run(thread_history(args.thread, args.db, args.checkpointer))
    if not checkpoints:
        raise ThreadError(f"thread {args.thread} holds no checkpoints")
    to_stdout(
        "".join(
            f"{checkpoint.checkpoint_id}  step {checkpoint.step:>3}  "
            f"next: {', '.join(checkpoint.next) or '(finished)'}\n"
            for checkpoint in checkpoints
        )
    )
    return exits.OK


def ask_person(err: Console) -> Ask:
    """Show a handoff at the terminal and read the person's decision."""

    def ask(handoff: Mapping[str, Any]) -> str:
        err.rule("[magenta]a person is needed[/]")
        err.print_json(data=dict(handoff))
        if handoff.get("kind") == "plan":
            return Prompt.ask(
                'accept, or a JSON edit ({"action": "edit", ...})',
                console=err,
                default="accept",
            )
        options = "/".join(handoff.get("options", ACTIONS))
        return Prompt.ask(
            f"decision ({options}, or 'hint: <text>')",
            console=err,
            default=str(handoff.get("recommended_action", "skip")),
        )

    return ask


def summary_line(summary: RunSummary) -> str:
    """The run's numbers in one paragraph, for the end of the CLI's output."""
    shares = " -> ".join(
        "n/a" if c is None else f"{c:.0%}" for c in summary.coverage_by_round
    )
    roles = ", ".join(
        f"{role} {summary.calls_by_role.get(role, 0)} calls / {tokens} tokens"
        for role, tokens in summary.tokens_by_role.items()
    )
    return (
        f"tasks {summary.tasks} ({summary.succeeded} returned, {summary.failures} "
        f"failed, {summary.retries} retried); rounds {summary.rounds}; coverage "
        f"{shares or 'n/a'}; {roles}; context {summary.parent_context_tokens} "
        f"(lead) vs {summary.all_in_one_context_tokens} (all in one); wall "
        f"{summary.wall_seconds:.1f}s, critical path "
        f"{summary.critical_path_seconds:.1f}s"
    )


def report_of(state: ResearchState) -> Report:
    """The report of a finished run."""
    report = state.get("report")
    if report is None:
        raise RuntimeError("the run ended without a report")
    return report


def run_result(
    state: ResearchState, seconds: float, thread_id: str, context: Context
) -> RunResult:
    """Everything a run produced, with the text of every passage it cites."""
    report = report_of(state)
    results = state.get("results", {})
    sources = Sources(knowledge_base(context.kb_path), tool_evidence(results.values()))
    findings = state.get("findings", [])
    cited = sources.passages(f.source.passage_id for f in findings)
    return RunResult(
        thread_id=thread_id,
        question=state["question"],
        report=report.markdown,
        plan=state["plan"],
        findings=tuple(findings),
        passages={pid: passage.text for pid, passage in cited.items()},
        coverage=tuple(state.get("coverage", [])),
        coverage_table=report.coverage_table,
        min_findings_per_value=context.min_findings_per_value,
        uncovered=report.unresolved_gaps,
        tasks=tuple(results.values()),
        summary=report.summary.model_copy(update={"wall_seconds": seconds}),
        events=tuple(state.get("events", [])),
    )


if __name__ == "__main__":
    sys.exit(main())
