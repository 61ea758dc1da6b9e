"""Eval datasets: breadth cases, and outline cases built from FreshWiki articles.

A breadth case lists the articles a complete answer draws on, grouped by the
facets a thorough decomposition must reach (`evals/data/breadth_dev.json`
format; any file of that format). An outline case asks for a briefing on one
article; its gold is the article's section headings (less See also, References
and the like), and it runs on a knowledge base that leaves that article out, as
STORM's evaluation does, so the run cannot copy the answer.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pydantic import BaseModel, Field

from evals.metrics import gold_headings
from runtime.kb import DEFAULT_CORPUS, ingest

BREADTH_DEV = Path(__file__).parent / "data" / "breadth_dev.json"
BREADTH_HELDOUT = Path(__file__).parent / "data" / "breadth_heldout.json"
"""Broad questions of other kinds than the dev ones; no threshold is fitted to it."""
BREADTH_TUNING = Path(__file__).parent / "data" / "breadth_tuning.json"
"""Broad questions whose first round misses kinds: for developing re-delegation."""
NAMED_BREADTH = {
    "breadth": BREADTH_DEV,
    "tuning": BREADTH_TUNING,
    "heldout": BREADTH_HELDOUT,
}
"""Breadth datasets taken by name where no file of that name exists."""


class BreadthCase(BaseModel):
    """One question and the article groups its answer must cite."""

    id: str
    query: str
    groups: dict[str, list[str]]

    @property
    def gold(self) -> set[str]:
        """Every article title of every group."""
        return {title for titles in self.groups.values() for title in titles}


class OutlineCase(BaseModel):
    """A briefing on one article, scored against the article's own headings."""

    id: str
    query: str
    article: str = Field(description="The article's title.")
    source: Path = Field(description="The article's file in the corpus.")
    headings: list[str] = Field(description="The article's section headings.")


class DatasetError(ValueError):
    """A dataset file that cannot be read as one."""


def load_breadth(path: Path = BREADTH_DEV) -> list[BreadthCase]:
    """The breadth cases of a dataset file, or of a named one (`NAMED_BREADTH`)."""
    if not path.exists():
        path = NAMED_BREADTH.get(str(path), path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [BreadthCase.model_validate(c) for c in data["cases"]]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise DatasetError(f"{path} is not a breadth dataset: {err}") from err


def outline_cases(corpus: Path = DEFAULT_CORPUS) -> list[OutlineCase]:
    """One outline case per article of a corpus of `.txt` files.

    The first line of a file is the article's id (underscores for spaces); its
    `# ` lines are its section headings.
    """
    cases = []
    for source in sorted(corpus.glob("*.txt")):
        lines = source.read_text(encoding="utf-8").splitlines()
        title = lines[0].strip().replace("_", " ")
        sections = [line[2:].strip() for line in lines if line.startswith("# ")]
        cases.append(
            OutlineCase(
                id=source.stem,
                query=f"Write a complete briefing on {title}.",
                article=title,
                source=source,
                headings=gold_headings(sections),
            )
        )
    return cases


def knowledge_base_without(case: OutlineCase, folder: Path) -> Path:
    """A knowledge base of the case's corpus less its own article, in `folder`."""
    documents = folder / "documents"
    documents.mkdir(parents=True, exist_ok=True)
    for source in case.source.parent.glob("*.txt"):
        if source != case.source:
            shutil.copyfile(source, documents / source.name)
    path = folder / "kb.sqlite"
    ingest(path, [documents])
    return path
