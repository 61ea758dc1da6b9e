"""Terminal progress of a run, drawn with rich from the graph's custom stream."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class RunProgress:
    """Shows the plan, subagents running and done per round, and coverage."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
        )
        self.rounds: dict[int, TaskID] = {}

    def __enter__(self) -> RunProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def on_event(self, event: Mapping[str, Any]) -> None:
        """Update the display for one protocol event."""
        kind = event.get("event")
        if kind == "DELEGATE":
            bar = self._round(int(event.get("round", 0)))
            self.progress.update(bar, total=(self.progress.tasks[bar].total or 0) + 1)
            self.console.log(
                f"[cyan]delegate[/] {shown(event.get('values', ''))} to "
                f"{shown(event.get('agent', ''))}"
            )
        elif kind == "RESULT":
            self.progress.advance(self._round(int(event.get("round", 0))))
            style = "green" if event.get("status") == "success" else "yellow"
            if event.get("status") == "failed":
                style = "red"
            self.console.log(
                f"[{style}]{event.get('status')}[/] {event.get('findings')} finding(s) "
                f"in {event.get('exec')}"
                + (f" - {shown(event['error'])}" if event.get("error") else "")
            )
        elif kind == "RETRY":
            self.console.log(
                f"[yellow]retry[/] attempt {event.get('attempt')} of {event.get('of')}"
                f" ({shown(event.get('agent', ''))})"
            )
        elif kind == "GATE":
            self.console.log(
                f"[red]denied[/] {shown(event.get('tool', ''))} by the "
                f"{shown(event.get('rule', ''))} gate: {shown(event.get('reason', ''))}"
            )
        elif kind == "ESCALATE":
            self.console.log(
                f"[magenta]escalate[/] {shown(event.get('reason', ''))} -> "
                f"{shown(event.get('decision', ''))}"
            )
        elif kind == "COVERAGE" and event.get("stage") == "plan":
            self.console.log(
                f"[bold]plan[/] {event.get('dimensions')} dimension(s), "
                f"{event.get('values')} value(s), {event.get('facets')} facet(s)"
                + (" - answering directly" if event.get("direct") else "")
            )
        elif kind == "COVERAGE" and event.get("stage") == "enumerate":
            self.console.log(f"[red]enumeration failed[/] {shown(event.get('error'))}")
        elif kind == "COVERAGE":
            share = event.get("coverage")
            self.console.log(
                f"[bold]coverage[/] round {event.get('round')}: "
                f"{'no values' if share is None else f'{float(share):.0%}'} "
                f"({event.get('covered')} covered, {event.get('uncovered')} not), "
                f"{event.get('new_values')} new value(s), "
                f"re-delegating {event.get('redelegate')}"
            )
            if event.get("added"):
                self.console.log(
                    f"  [magenta]the plan missed:[/] {shown(event['added'])}"
                )
            if event.get("stopped"):
                self.console.log(f"  [bold]stopped:[/] {shown(event['stopped'])}")

    def _round(self, round_no: int) -> TaskID:
        if round_no not in self.rounds:
            self.rounds[round_no] = self.progress.add_task(
                f"round {round_no} subagents", total=0
            )
        return self.rounds[round_no]


def shown(value: object) -> str:
    """Text from a model or the knowledge base made safe to print.

    Rich markup in it is escaped and control characters are dropped.
    """
    return escape(_CONTROL.sub("", str(value)))
