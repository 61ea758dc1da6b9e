"""Eval results as a LangSmith experiment, against a local imitation of its API."""

from __future__ import annotations

import io
import json
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from rich.console import Console

from cli import exits
from cli.main import main
from evals.datasets import load_breadth
from evals.langsmith_upload import METRICS, publish
from evals.runner import CaseScore

TENANT = "00000000-0000-0000-0000-00000000000a"
CREATED = "2026-01-01T00:00:00+00:00"


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any


@dataclass
class FakeLangSmith:
    """The few LangSmith endpoints an eval upload calls, answered from memory."""

    url: str = ""
    failing: bool = False
    requests: list[Request] = field(default_factory=list)
    datasets: list[dict[str, Any]] = field(default_factory=list)
    examples: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, request: Request) -> tuple[int, Any]:
        with self.lock:
            self.requests.append(request)
            if self.failing:
                return 500, {"detail": "internal server error"}
            return self._answer(request)

    def _answer(self, request: Request) -> tuple[int, Any]:
        method, path, query, body = (
            request.method,
            request.path,
            request.query,
            request.body,
        )
        if (method, path) == ("GET", "/info"):
            return 200, {"version": "0.10.0", "instance_flags": {}}
        if (method, path) == ("GET", "/datasets"):
            names = query.get("name", [])
            return 200, [d for d in self.datasets if d["name"] in names]
        if (method, path) == ("POST", "/datasets"):
            dataset = {**body, "id": str(uuid.uuid4()), "created_at": CREATED}
            self.datasets.append(dataset)
            return 200, dataset
        if (method, path) == ("GET", "/examples"):
            ids = query.get("dataset", [])
            offset = int(query.get("offset", ["0"])[0])
            held = [e for e in self.examples if e["dataset_id"] in ids]
            return 200, held[offset:]
        if (method, path) == ("POST", "/examples/bulk"):
            self.examples.extend(body)
            return 200, [{**e, "created_at": CREATED} for e in body]
        if (method, path) == ("GET", "/sessions"):
            return 200, [self._project({"name": "any", "id": str(uuid.uuid4())})]
        if (method, path) == ("POST", "/sessions"):
            return 200, self._project(body)
        if (method, path) in {("POST", "/runs"), ("POST", "/feedback")}:
            return 200, {}
        return 404, {"detail": f"no {method} {path} here"}

    @staticmethod
    def _project(body: dict[str, Any]) -> dict[str, Any]:
        return {
            "reference_dataset_id": None,
            **body,
            "tenant_id": TENANT,
            "start_time": CREATED,
        }

    def sent(self, method: str, path: str) -> list[Any]:
        return [r.body for r in self.requests if (r.method, r.path) == (method, path)]


def handler(fake: FakeLangSmith) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            status, answer = fake.answer(
                Request(self.command, parts.path, parse_qs(parts.query), body)
            )
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def langsmith(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLangSmith]:
    """A fake LangSmith on a free local port; the environment points at it."""
    fake = FakeLangSmith()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(fake))
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    monkeypatch.setenv("LANGSMITH_ENDPOINT", fake.url)
    monkeypatch.setenv("LANGSMITH_API_KEY", "test-key")
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    for name in ("LANGCHAIN_ENDPOINT", "LANGCHAIN_API_KEY", "LANGSMITH_RUNS_ENDPOINTS"):
        monkeypatch.delenv(name, raising=False)
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def run_eval(kb: str, out: Path, *more: str) -> int:
    return main(
        [
            "eval",
            "--dataset",
            "breadth",
            "--lead-model",
            "extractive",
            "--subagent-model",
            "extractive",
            "--kb",
            kb,
            "--json",
            str(out),
            *more,
        ]
    )


def test_the_eval_command_uploads_its_cases_and_scores_as_an_experiment(
    langsmith: FakeLangSmith,
    freshwiki_kb: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "scores.json"
    assert run_eval(freshwiki_kb, out) == exits.OK
    scores = json.loads(out.read_text())
    cases = {case.id: case for case in load_breadth()}
    assert len(scores) == len(cases) == 2

    [dataset] = langsmith.sent("POST", "/datasets")
    assert dataset["name"] == "delegator-breadth"
    [examples] = langsmith.sent("POST", "/examples/bulk")
    dataset_id = langsmith.datasets[0]["id"]
    assert all(e["dataset_id"] == dataset_id for e in examples)
    assert {e["metadata"]["case_id"]: e["inputs"]["question"] for e in examples} == {
        case_id: case.query for case_id, case in cases.items()
    }
    example_of = {e["metadata"]["case_id"]: e["id"] for e in examples}

    [project] = langsmith.sent("POST", "/sessions")
    assert project["name"].startswith("delegator-eval-breadth-")
    assert project["reference_dataset_id"] == dataset_id
    assert project["extra"]["metadata"]["lead_model"] == "extractive"

    runs = langsmith.sent("POST", "/runs")
    assert len(runs) == len(scores)
    run_of = {}
    for run in runs:
        case_id = run["extra"]["metadata"]["case_id"]
        assert run["session_name"] == project["name"]
        assert run["inputs"] == {"question": cases[case_id].query}
        assert run["reference_example_id"] == example_of[case_id]
        assert run["outputs"]["case_id"] == case_id
        run_of[case_id] = run["id"]

    expected = {
        (run_of[s["case_id"]], key, round(s[key], 4))
        for s in scores
        for key in METRICS
        if s[key] is not None
    }
    feedback = langsmith.sent("POST", "/feedback")
    assert {(f["run_id"], f["key"], f["score"]) for f in feedback} == expected
    assert {f["session_id"] for f in feedback} == {project["id"]}
    assert {key for _, key, _ in expected} >= {"group_coverage", "article_recall"}

    told = capsys.readouterr().err
    assert f"LangSmith experiment {project['name']}" in told
    assert f"/datasets/{dataset_id}/compare?selectedSessions={project['id']}" in told


def test_an_existing_dataset_is_reused_and_gains_only_the_cases_it_lacks(
    langsmith: FakeLangSmith,
) -> None:
    first, second = load_breadth()
    held = str(uuid.uuid4())
    dataset = {"name": "delegator-breadth", "id": str(uuid.uuid4())}
    langsmith.datasets.append({**dataset, "created_at": CREATED})
    langsmith.examples.append(
        {
            "id": held,
            "dataset_id": dataset["id"],
            "inputs": {"question": first.query},
            "metadata": {"case_id": first.id},
        }
    )
    scores = [
        CaseScore(case_id=first.id, kind="breadth", max_rounds=0, group_coverage=0.5),
        CaseScore(case_id=second.id, kind="breadth", max_rounds=0, error="timeout"),
    ]
    told = io.StringIO()

    experiment = publish("breadth", [first, second], scores, Console(file=told))

    assert experiment is not None and experiment.name in told.getvalue()
    assert langsmith.sent("POST", "/datasets") == []
    [created] = langsmith.sent("POST", "/examples/bulk")
    assert [e["metadata"]["case_id"] for e in created] == [second.id]
    runs = {
        r["extra"]["metadata"]["case_id"]: r for r in langsmith.sent("POST", "/runs")
    }
    assert runs[first.id]["reference_example_id"] == held
    assert runs[second.id]["reference_example_id"] == created[0]["id"]
    assert runs[second.id]["error"] == "timeout"
    feedback = langsmith.sent("POST", "/feedback")
    assert [(f["key"], f["score"]) for f in feedback] == [("group_coverage", 0.5)]


def test_without_an_api_key_nothing_reaches_langsmith(
    langsmith: FakeLangSmith,
    freshwiki_kb: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LANGSMITH_API_KEY")
    out = tmp_path / "scores.json"
    assert run_eval(freshwiki_kb, out, "--limit", "1") == exits.OK
    assert len(json.loads(out.read_text())) == 1
    assert langsmith.requests == []
    assert "LangSmith" not in capsys.readouterr().err
    assert publish("breadth", load_breadth(), [], Console(file=io.StringIO())) is None
    assert langsmith.requests == []


def test_a_failing_langsmith_is_one_warning_and_the_results_stand(
    langsmith: FakeLangSmith,
    freshwiki_kb: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    langsmith.failing = True
    out = tmp_path / "scores.json"
    assert run_eval(freshwiki_kb, out, "--limit", "1") == exits.OK
    [score] = json.loads(out.read_text())
    assert score["error"] is None and score["group_coverage"] is not None
    assert langsmith.requests, "the upload was tried"
    captured = capsys.readouterr()
    assert "groups" in captured.out
    [warning] = [line for line in captured.err.splitlines() if "LangSmith" in line]
    assert warning.startswith("warning: LangSmith upload failed")
    assert "500" in warning
