"""Breadth eval: does a run cite every group of articles a complete answer needs?

A case lists article titles grouped by the facets a thorough answer must reach;
a group is covered when a verified finding of the final report cites one of its
articles. Run `python -m evals.breadth` for the table with and without
re-delegation.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from graphs.research import graph
from runtime.context import Context
from state.findings import Finding

DEV_CASES = Path(__file__).parent / "data" / "breadth_dev.json"


class BreadthCase(BaseModel):
    """One question and the article groups its answer must cite."""

    id: str
    query: str
    groups: dict[str, list[str]]


@dataclass(frozen=True)
class CaseResult:
    """Groups a run covered, with its plan coverage and timing."""

    case_id: str
    max_rounds: int
    covered_groups: tuple[str, ...]
    missing_groups: tuple[str, ...]
    plan_coverage: float
    tasks: int
    seconds: float

    @property
    def group_recall(self) -> float:
        """Share of the case's groups covered."""
        total = len(self.covered_groups) + len(self.missing_groups)
        return len(self.covered_groups) / total if total else 1.0


def load_cases(path: Path = DEV_CASES) -> list[BreadthCase]:
    """The breadth cases of a dataset file."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [BreadthCase.model_validate(c) for c in data["cases"]]


def covered_groups(case: BreadthCase, findings: list[Finding]) -> list[str]:
    """The groups with at least one article cited by a verified finding."""
    cited = {f.source.title for f in findings if f.verified}
    return [g for g, titles in case.groups.items() if cited & set(titles)]


async def run_case(case: BreadthCase, context: Context) -> CaseResult:
    """Research a case's question and score the groups its findings cite."""
    started = time.perf_counter()
    state: dict[str, Any] = {}
    async for values in graph.astream(
        {"question": case.query}, context=context, stream_mode="values"
    ):
        state = values  # the last values: the whole final state, findings included
    covered = covered_groups(case, state.get("findings", []))
    return CaseResult(
        case_id=case.id,
        max_rounds=context.max_rounds,
        covered_groups=tuple(covered),
        missing_groups=tuple(g for g in case.groups if g not in covered),
        plan_coverage=state["report"].summary.coverage,
        tasks=state["report"].summary.tasks,
        seconds=time.perf_counter() - started,
    )


async def compare(context: Context, cases: list[BreadthCase]) -> list[CaseResult]:
    """Each case without re-delegation, then with `context.max_rounds`."""
    results = []
    for case in cases:
        for rounds in (0, context.max_rounds):
            results.append(await run_case(case, replace(context, max_rounds=rounds)))
    return results


def main() -> None:
    """Print group coverage with and without re-delegation for the dev cases."""
    cli = argparse.ArgumentParser(description=__doc__)
    cli.add_argument("--max-rounds", type=int, default=Context().max_rounds)
    cli.add_argument("--model", default="extractive", help="spec for every role")
    args = cli.parse_args()
    context = Context(
        lead_model=args.model, subagent_model=args.model, max_rounds=args.max_rounds
    )
    print("case | max_rounds | groups covered | missing | plan coverage | tasks | s")
    for r in asyncio.run(compare(context, load_cases())):
        total = len(r.covered_groups) + len(r.missing_groups)
        print(
            f"{r.case_id} | {r.max_rounds} | {len(r.covered_groups)}/{total} | "
            f"{', '.join(r.missing_groups) or '-'} | {r.plan_coverage:.0%} | "
            f"{r.tasks} | {r.seconds:.2f}"
        )


if __name__ == "__main__":
    main()
