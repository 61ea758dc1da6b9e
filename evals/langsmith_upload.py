"""Eval results as a LangSmith experiment, when `LANGSMITH_API_KEY` is set.

The cases go to a LangSmith dataset named `delegator-<dataset>`, created on the
first upload and reused after, which gains an example for each case it does not
hold yet (found by the `case_id` in its metadata). The scored runs become one
experiment on that dataset, `delegator-eval-<dataset>-<UTC time>`: a run per
scored run, linked to its case's example, with the question as input, the whole
score as output and one feedback per metric that applies. `LANGSMITH_ENDPOINT`
picks the server. Without the key nothing here makes a client or a request.
"""

from __future__ import annotations

import datetime as dt
import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langsmith import Client
from langsmith.schemas import Dataset
from langsmith.utils import LangSmithNotFoundError
from rich.console import Console
from rich.markup import escape

from evals.datasets import NAMED_BREADTH, OutlineCase
from evals.runner import COLUMNS, Case, CaseScore
from runtime.reliability import describe

METRICS = tuple(key for key, _ in COLUMNS)
SHIPPED = (*NAMED_BREADTH, "outlines")


@dataclass(frozen=True)
class Experiment:
    """An uploaded experiment: its name, and its page when the server tells it."""

    name: str
    url: str | None


def enabled() -> bool:
    """Whether eval results go to LangSmith: `LANGSMITH_API_KEY` is set."""
    return bool(os.environ.get("LANGSMITH_API_KEY"))


def label(dataset: str) -> str:
    """The short name of an eval dataset given as `--dataset` (a file's stem)."""
    return dataset if dataset in SHIPPED else Path(dataset).stem


def publish(
    dataset: str,
    cases: Sequence[Case],
    scores: Sequence[CaseScore],
    console: Console,
    metadata: Mapping[str, Any] | None = None,
) -> Experiment | None:
    """Upload the scores when `enabled()`, and say how it went in one line.

    A failed upload is a warning, never an exception: the scores are already
    printed and written, and stay as they are.
    """
    if not enabled():
        return None
    try:
        experiment = upload(label(dataset), cases, scores, metadata=metadata)
    except Exception as error:  # noqa: BLE001 - the local results stand without it
        console.print(
            "[yellow]warning:[/] LangSmith upload failed, the results are kept "
            f"locally only: {escape(describe(error))}",
            soft_wrap=True,
        )
        return None
    console.print(
        f"LangSmith experiment {escape(experiment.name)}"
        + (f": {escape(experiment.url)}" if experiment.url else ""),
        soft_wrap=True,
    )
    return experiment


def upload(
    dataset: str,
    cases: Sequence[Case],
    scores: Sequence[CaseScore],
    *,
    metadata: Mapping[str, Any] | None = None,
) -> Experiment:
    """Send the cases and their scores to LangSmith as one experiment.

    Args:
        dataset: Short name of the eval dataset, as `label` gives it.
        cases: The cases that ran.
        scores: Their scores, any number per case (two with ablation).
        metadata: Settings of the eval to keep on the experiment.

    Returns:
        The experiment's name and page.

    Raises:
        Exception: Whatever the client raises on the first request that fails.
    """
    failures: list[Exception] = []
    # Unbatched: every call is sent as it is made, and a run that fails to post
    # reaches `failures` instead of a background thread's log.
    client = Client(auto_batch_tracing=False, tracing_error_callback=failures.append)
    try:
        reference, created = _dataset(client, f"delegator-{dataset}")
        examples = _examples(client, reference, cases, listed=not created)
        now = dt.datetime.now(dt.UTC)
        name = f"delegator-eval-{dataset}-{now:%Y%m%d-%H%M%S}"
        project = client.create_project(
            name,
            description=f"delegator eval on {dataset}",
            metadata=dict(metadata or {}),
            reference_dataset_id=reference.id,
        )
        questions = {case.id: case.query for case in cases}
        for score in scores:
            run_id = uuid.uuid4()
            started = now - dt.timedelta(seconds=score.wall_seconds)
            client.create_run(
                "delegator",
                {"question": questions[score.case_id]},
                "chain",
                project_name=name,
                id=run_id,
                trace_id=run_id,
                dotted_order=f"{started:%Y%m%dT%H%M%S%fZ}{run_id}",
                start_time=started,
                end_time=now,
                outputs=score.model_dump(mode="json"),
                error=score.error,
                reference_example_id=examples[score.case_id],
                extra={
                    "metadata": {
                        "case_id": score.case_id,
                        "max_rounds": score.max_rounds,
                    }
                },
            )
            if failures:
                raise failures[0]
            for key in METRICS:
                value = getattr(score, key)
                if value is not None:
                    client.create_feedback(
                        run_id,
                        key,
                        score=value,
                        trace_id=run_id,
                        session_id=project.id,
                        start_time=started,
                    )
        return Experiment(name, _compare_url(project.url, reference.id, project.id))
    finally:
        client.close()


def _dataset(client: Client, name: str) -> tuple[Dataset, bool]:
    """The dataset named `name`, and whether it had to be created."""
    try:
        return client.read_dataset(dataset_name=name), False
    except LangSmithNotFoundError:
        return client.create_dataset(name, description="delegator eval cases"), True


def _examples(
    client: Client, dataset: Dataset, cases: Sequence[Case], *, listed: bool
) -> dict[str, uuid.UUID]:
    """Each case's example id, creating the examples the dataset lacks.

    With `listed`, the dataset's examples are read first, so a case it already
    holds keeps its example.
    """
    ids: dict[str, uuid.UUID] = {}
    if listed:
        for example in client.list_examples(dataset_id=dataset.id):
            case_id = (example.metadata or {}).get("case_id")
            if isinstance(case_id, str):
                ids.setdefault(case_id, example.id)
    missing = [case for case in cases if case.id not in ids]
    for case in missing:
        ids[case.id] = uuid.uuid4()
    if missing:
        client.create_examples(
            dataset_id=dataset.id,
            examples=[
                {
                    "id": ids[case.id],
                    "inputs": {"question": case.query},
                    "reference_outputs": _reference(case),
                    "metadata": {"case_id": case.id},
                }
                for case in missing
            ],
        )
    return ids


def _reference(case: Case) -> dict[str, Any]:
    """What a complete answer to a case covers."""
    if isinstance(case, OutlineCase):
        return {"article": case.article, "headings": case.headings}
    return {"groups": case.groups}


def _compare_url(
    project_url: str | None, dataset_id: uuid.UUID, project_id: uuid.UUID
) -> str | None:
    """The experiment's page on its dataset, as LangSmith's own evals link it."""
    if not project_url:
        return None
    base = project_url.split("?")[0].split("/projects/p/")[0]
    return f"{base}/datasets/{dataset_id}/compare?selectedSessions={project_id}"
