"""The knowledge base: one SQLite file, passages indexed with FTS5 and BM25."""

from __future__ import annotations

import functools
import json
import os
import re
import sqlite3
import tempfile
from collections import defaultdict
from collections.abc import Collection, Iterable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from runtime.corpus import CorpusError, Document, passages, read_documents
from state.findings import Source

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = PROJECT_ROOT / "data" / "freshwiki"
DEFAULT_KB_PATH = PROJECT_ROOT / "data" / "kb.sqlite"

RELEVANT_SHARE = 0.5
"""A document or passage is relevant when it scores this share of the best."""
# BM25 column weights: title, section, text.
_WEIGHTS = (8.0, 3.0, 1.0)
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because
    been before being below between both but by can could did do does doing down during
    each few for from further had has have having he her here hers him his how i if in
    into is it its itself just me more most my no nor not now of off on once only or
    other our out over own same she should so some such than that the their them then
    there these they this those through to too under until up very was we were what
    when where which while who whom why will with would you your each did cause caused
    which whose many much may might must shall yet get got make made one two""".split()
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY, title TEXT NOT NULL, url TEXT
);
CREATE VIRTUAL TABLE IF NOT EXISTS passages USING fts5(
    passage_id UNINDEXED, doc_id UNINDEXED, title, section, text,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
"""


class KnowledgeBaseError(RuntimeError):
    """The knowledge base is missing or cannot be read."""


@dataclass(frozen=True)
class Passage:
    """One indexed passage, with its BM25 score when it came from a search."""

    passage_id: str
    doc_id: str
    title: str
    url: str | None
    section: str
    text: str
    score: float = 0.0

    def source(self) -> Source:
        """This passage as a finding's source."""
        return Source(
            doc_id=self.doc_id,
            passage_id=self.passage_id,
            title=self.title,
            url=self.url,
            section=self.section,
        )


def terms(text: str) -> list[str]:
    """Content words of `text`: lower-cased, stopwords and single letters dropped."""
    return [
        w
        for w in (m.group().casefold() for m in _WORD.finditer(text))
        if len(w) > 1 and w not in STOPWORDS
    ]


def stem(word: str) -> str:
    """A light suffix-stripping stem, to match 'disasters' with 'disaster'."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def match_query(words: Iterable[str], *, op: str = "OR") -> str:
    """An FTS5 MATCH expression over `words`, each quoted as a literal."""
    quoted = dict.fromkeys('"' + w.replace('"', "") + '"' for w in words)
    return f" {op} ".join(quoted)


class KnowledgeBase:
    """Read access to a built knowledge base file."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise KnowledgeBaseError(
                f"no knowledge base at {self.path}; build one with "
                f"`delegator ingest PATH --kb {self.path}`"
            )
        with closing(self._connect()) as db:
            try:
                self.size = db.execute("SELECT count(*) FROM passages").fetchone()[0]
            except sqlite3.DatabaseError as err:
                raise KnowledgeBaseError(
                    f"{self.path} is not a knowledge base: {err}"
                ) from err
        if not self.size:
            raise KnowledgeBaseError(f"the knowledge base at {self.path} is empty")

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path.resolve().as_uri() + "?mode=ro", uri=True)

    def search(
        self,
        query: str,
        k: int = 8,
        *,
        op: str = "OR",
        doc_id: str | None = None,
        exclude: Collection[str] = (),
    ) -> list[Passage]:
        """The `k` best passages for the content words of `query` (BM25).

        `op="AND"` requires every word; `doc_id` keeps one document's passages;
        passages whose ids are in `exclude` are left out.
        """
        expr = match_query(terms(query), op=op)
        if not expr:
            return []
        sql = (
            "SELECT p.passage_id, p.doc_id, p.title, d.url, p.section, p.text,"
            " -bm25(passages, 0, 0, ?, ?, ?) AS score"
            " FROM passages p JOIN documents d USING (doc_id)"
            " WHERE passages MATCH ? AND (? IS NULL OR p.doc_id = ?)"
            " AND p.passage_id NOT IN (SELECT value FROM json_each(?))"
            " ORDER BY score DESC LIMIT ?"
        )
        args = (*_WEIGHTS, expr, doc_id, doc_id, json.dumps(list(exclude)), k)
        with closing(self._connect()) as db:
            rows = db.execute(sql, args).fetchall()
        return [Passage(*row) for row in rows]

    def rank_documents(
        self, query: str, k: int = 10, depth: int = 200
    ) -> list[Passage]:
        """The best passage of each of the `k` best documents for `query`."""
        best: dict[str, Passage] = {}
        for hit in self.search(query, depth):
            best.setdefault(hit.doc_id, hit)
        return sorted(best.values(), key=lambda p: p.score, reverse=True)[:k]

    def passage(self, passage_id: str) -> Passage | None:
        """The passage with this id, or None."""
        sql = (
            "SELECT p.passage_id, p.doc_id, p.title, d.url, p.section, p.text, 0.0"
            " FROM passages p JOIN documents d USING (doc_id) WHERE p.passage_id = ?"
        )
        with closing(self._connect()) as db:
            row = db.execute(sql, (passage_id,)).fetchone()
        return Passage(*row) if row else None

    def passages(self, passage_ids: Iterable[str]) -> dict[str, Passage]:
        """The passages with these ids, by id; unknown ids are left out."""
        ids = list(dict.fromkeys(passage_ids))
        found: dict[str, Passage] = {}
        sql = (
            "SELECT p.passage_id, p.doc_id, p.title, d.url, p.section, p.text, 0.0"
            " FROM passages p JOIN documents d USING (doc_id)"
            " WHERE p.passage_id IN (SELECT value FROM json_each(?))"
        )
        with closing(self._connect()) as db:
            for row in db.execute(sql, (json.dumps(ids),)):
                found[row[0]] = Passage(*row)
        return found

    def document_frequencies(self, words: Iterable[str]) -> dict[str, int]:
        """In how many passages each word occurs."""
        counts: dict[str, int] = defaultdict(int)
        with closing(self._connect()) as db:
            for word in dict.fromkeys(words):
                expr = match_query([word])
                if expr:
                    counts[word] = db.execute(
                        "SELECT count(*) FROM passages WHERE passages MATCH ?", (expr,)
                    ).fetchone()[0]
        return counts


def ingest(kb_path: Path | str, sources: Iterable[Path | str]) -> tuple[int, int]:
    """Add the documents under `sources` to the knowledge base at `kb_path`.

    Re-ingesting a document replaces it. Returns (documents, passages) added.
    """
    docs = [doc for src in sources for doc in read_documents(Path(src))]
    ids = [doc.doc_id for doc in docs]
    if clashes := sorted({i for i in ids if ids.count(i) > 1}):
        raise CorpusError(
            f"documents would share an id (same name, other extension or source): "
            f"{', '.join(clashes)}"
        )
    path = Path(kb_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(path)) as db, db:
        db.executescript(_SCHEMA)
        n_passages = sum(_insert(db, doc) for doc in docs)
    return len(docs), n_passages


def _insert(db: sqlite3.Connection, doc: Document) -> int:
    db.execute("DELETE FROM passages WHERE doc_id = ?", (doc.doc_id,))
    db.execute(
        "INSERT OR REPLACE INTO documents VALUES (?, ?, ?)",
        (doc.doc_id, doc.title, doc.url),
    )
    rows = [
        (f"{doc.doc_id}#{n}", doc.doc_id, doc.title, section, text)
        for n, (section, text) in enumerate(passages(doc))
    ]
    db.executemany("INSERT INTO passages VALUES (?, ?, ?, ?, ?)", rows)
    return len(rows)


@functools.cache
def knowledge_base(kb_path: str = "") -> KnowledgeBase:
    """The knowledge base at `kb_path`, or the shipped FreshWiki index, opened once.

    The shipped index is built on first use.
    """
    if kb_path:
        return KnowledgeBase(kb_path)
    if not DEFAULT_KB_PATH.is_file():
        build_default()
    return KnowledgeBase(DEFAULT_KB_PATH)


def build_default() -> Path:
    """Build the index of the shipped corpus atomically (safe under concurrency)."""
    DEFAULT_KB_PATH.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".sqlite", dir=DEFAULT_KB_PATH.parent)
    os.close(fd)
    try:
        ingest(tmp, [DEFAULT_CORPUS])
        os.replace(tmp, DEFAULT_KB_PATH)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return DEFAULT_KB_PATH
