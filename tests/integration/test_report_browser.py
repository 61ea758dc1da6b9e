"""The report and eval pages in a real browser: Debian's Chromium via Playwright.

The browser is never downloaded: the tests use the `chromium` on PATH (Debian's
`chromium` package) and fail if there is none.
"""

from __future__ import annotations

import shutil
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import pytest
from playwright.sync_api import Page, sync_playwright

from cli.main import run_result
from presentation.page import eval_page, report_page
from presentation.page_model import split_passage
from state.findings import normalize_text
from state.graph import ResearchState
from state.result import RunResult
from tests.support import extractive, research

pytestmark = pytest.mark.integration
QUESTION = (
    "Which natural disasters and severe weather events struck in 2022 and 2023, "
    "and what damage did each cause?"
)


@dataclass
class Visit:
    """An open page and what it did: console errors and every request's URL."""

    page: Page
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def chromium() -> str:
    """Debian's Chromium, from PATH."""
    path = shutil.which("chromium")
    if path is None:
        pytest.fail(
            "no `chromium` on PATH: install Debian's `chromium` package "
            "(apt-get install chromium); .ci/run does"
        )
    return path


@pytest.fixture(scope="module")
def result(freshwiki_kb: str) -> RunResult:
    """A real extractive run with one re-delegation round, as `--json` writes it."""
    context = extractive(freshwiki_kb, max_rounds=1)
    started = time.perf_counter()
    state = research(QUESTION, context)
    seconds = time.perf_counter() - started
    return run_result(cast(ResearchState, state), seconds, "browser", context)


@contextmanager
def visit(chromium: str, path: Path, *, javascript: bool = True) -> Iterator[Visit]:
    """`path` opened in Chromium, with its console errors and requests recorded."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium, args=["--no-sandbox"]
        )
        try:
            context = browser.new_context(
                viewport={"width": 1200, "height": 800}, java_script_enabled=javascript
            )
            opened = Visit(context.new_page())
            opened.page.on(
                "console",
                lambda m: opened.errors.append(m.text) if m.type == "error" else None,
            )
            opened.page.on("pageerror", lambda e: opened.errors.append(str(e)))
            opened.page.on("request", lambda r: opened.requests.append(r.url))
            opened.page.goto(path.as_uri())
            yield opened
        finally:
            browser.close()


def test_the_report_page_in_a_browser(
    chromium: str, result: RunResult, tmp_path: Path
) -> None:
    path = tmp_path / "report.html"
    path.write_text(report_page(result), encoding="utf-8")
    with visit(chromium, path) as opened:
        page = opened.page
        rows = page.locator("#coverage-matrix tbody th[scope=row]").all_text_contents()
        assert rows == [r.value for r in result.coverage_table]
        rounds = page.locator("#coverage-matrix thead th").all_text_contents()[1:]
        assert rounds == [f"Round {c.round}" for c in result.coverage]

        bars = page.locator("rect.bar")
        assert bars.count() == len(result.tasks) > 0
        ids = [bars.nth(i).get_attribute("data-task-id") for i in range(bars.count())]
        assert sorted(ids, key=str) == sorted(t.task_id for t in result.tasks)
        for n, task_id in enumerate(ids):
            bars.nth(n).focus()
            focused = page.evaluate(
                "() => [document.activeElement.dataset.taskId, "
                "getComputedStyle(document.activeElement).outlineStyle]"
            )
            assert focused[0] == task_id
            assert focused[1] != "none", "a focused bar shows no outline"
        shown = bars.last.locator("title").text_content()
        assert page.inner_text("#bar-detail") == shown, "the script shows no detail"
        if len(ids) > 1:
            bars.first.focus()
            page.keyboard.press("Tab")
            assert page.evaluate("document.activeElement.dataset.taskId") == ids[1]

        assert Counter(marked(page)) == Counter(quoted(result))
        page.screenshot(path=tmp_path / "report.png", full_page=True)
        assert opened.errors == []
        assert opened.requests, "the page was never requested"
        assert all(url.startswith("file://") for url in opened.requests), (
            opened.requests
        )
    assert (tmp_path / "report.png").stat().st_size > 0


def test_the_report_page_reads_without_javascript(
    chromium: str, result: RunResult, tmp_path: Path
) -> None:
    path = tmp_path / "report.html"
    path.write_text(report_page(result), encoding="utf-8")
    with visit(chromium, path, javascript=False) as opened:
        page = opened.page
        rows = page.locator("#coverage-matrix tbody th[scope=row]")
        assert rows.count() == len(result.coverage_table)
        groups = page.locator("#coverage-matrix tbody th[scope=rowgroup]")
        assert groups.all_text_contents() == list(
            dict.fromkeys(r.dimension for r in result.coverage_table)
        )
        assert page.locator("rect.bar").count() == len(result.tasks)
        assert Counter(marked(page)) == Counter(quoted(result))
        assert page.locator("#report li").count() > 0
        assert opened.errors == []


def test_the_eval_page_in_a_browser(chromium: str, tmp_path: Path) -> None:
    scores = [
        {
            "case_id": "disasters",
            "kind": "breadth",
            "max_rounds": rounds,
            "group_coverage": coverage,
            "missing_groups": missing,
            "tasks": tasks,
            "wall_seconds": 1.5,
            "error": None,
        }
        for rounds, coverage, missing, tasks in [
            (0, 0.8, ["wildfires"], 5),
            (3, 1.0, [], 16),
        ]
    ]
    path = tmp_path / "eval.html"
    path.write_text(eval_page(scores), encoding="utf-8")
    with visit(chromium, path) as opened:
        assert opened.page.locator("table.eval").count() == 1
        assert "wildfires" in opened.page.inner_text("table.eval")
        assert opened.errors == []
        assert all(url.startswith("file://") for url in opened.requests)


def marked(page: Page) -> list[str]:
    """The quoted spans the page marks, in normal form."""
    return [normalize_text(t) for t in page.locator("mark").all_text_contents()]


def quoted(result: RunResult) -> list[str]:
    """The verified findings' quotes that their passages hold, in normal form."""
    passages = result.passages
    found = [
        split_passage(passages.get(f.source.passage_id, ""), f.quote)[1]
        for f in result.findings
        if f.verified
    ]
    assert any(found), "no quote was found in its passage"
    return [normalize_text(q) for q in found if q]
