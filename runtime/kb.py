"""The knowledge base: one SQLite file, passages indexed with FTS5 and BM25."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sqlite3
import tempfile
import threading
from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from runtime.corpus import Document, Skipped, passages, read_documents
from runtime.text import ends_sentence, keywords, other_number, years
from state.findings import Source

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = PROJECT_ROOT / "data" / "freshwiki"
DEFAULT_KB_PATH = PROJECT_ROOT / "data" / "kb.sqlite"

RELEVANT_SHARE = 0.5
"""A document or passage is relevant when it scores this share of the best."""
# BM25 column weights: title, section, text.
_WEIGHTS = (8.0, 3.0, 1.0)

APPLICATION_ID = 0x444C4754
"""`PRAGMA application_id` of a delegator knowledge base: "DLGT" in ASCII."""
FORMAT_VERSION = 1
"""`PRAGMA user_version` of the knowledge base layout this code reads and writes."""
_SCHEMA = (
    "CREATE TABLE documents ("
    " doc_id TEXT PRIMARY KEY, title TEXT NOT NULL, url TEXT,"
    " source TEXT NOT NULL UNIQUE)",
    "CREATE VIRTUAL TABLE passages USING fts5("
    " passage_id UNINDEXED, doc_id UNINDEXED, title, section, text,"
    " tokenize = 'porter unicode61 remove_diacritics 2')",
    f"PRAGMA application_id = {APPLICATION_ID}",
    f"PRAGMA user_version = {FORMAT_VERSION}",
)


def lead_id(doc_id: str) -> str:
    """The id of a document's lead: its first passage, which says what it is."""
    return f"{doc_id}#0"


class KnowledgeBaseError(RuntimeError):
    """The knowledge base is missing, cannot be read or written, or is not one."""


@dataclass(frozen=True)
class IngestResult:
    """What an ingest added, and the files it left out with the reason."""

    documents: int
    passages: int
    skipped: tuple[Skipped, ...]


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


def opening(text: str) -> str:
    """The first paragraph of a text: its lines up to the first that ends a sentence.

    Passages keep a line break both between paragraphs and inside hard-wrapped
    ones, so where a sentence ends tells a paragraph's end.
    """
    lines = []
    for line in text.strip().splitlines():
        lines.append(line.strip())
        if ends_sentence(line):
            break
    return " ".join(lines)


def match_query(words: Iterable[str], *, op: str = "OR") -> str:
    """An FTS5 MATCH expression over `words`, each quoted as a literal.

    A word in -sis or -ses matches its other number too (`other_number`).
    """
    quoted = dict.fromkeys(_either(w.replace('"', "")) for w in words)
    return f" {op} ".join(quoted)


def _either(word: str) -> str:
    """`word` quoted, or in parentheses with its other number when it has one."""
    other = other_number(word)
    return f'("{word}" OR "{other}")' if other else f'"{word}"'


class KnowledgeBase:
    """Read access to a built knowledge base file."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self._rowids: dict[str, int] = {}
        self._rowids_version: tuple[int, int, int, int] | None = None
        if self.path.is_dir():
            folder = self.path if self.path.name else self.path.resolve()
            built = folder.parent / f"{folder.name or 'kb'}.sqlite"
            raise KnowledgeBaseError(
                f"{self.path} is a folder, not a knowledge base file; build one of "
                f"it with `delegator ingest {self.path} --kb {built}`"
            )
        if not self.path.is_file():
            raise KnowledgeBaseError(
                f"no knowledge base at {self.path}; build one with "
                f"`delegator ingest PATH --kb {self.path}`"
            )
        if not self.path.stat().st_size:
            raise KnowledgeBaseError(
                f"{self.path} is an empty file; build a knowledge base in it with "
                f"`delegator ingest PATH --kb {self.path}`"
            )
        with self._reading() as db:
            _check_format(db, self.path)
            self.size = db.execute("SELECT count(*) FROM passages").fetchone()[0]
        if not self.size:
            raise KnowledgeBaseError(f"the knowledge base at {self.path} is empty")

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """A connection that only reads; any SQLite error is a KnowledgeBaseError.

        The file is opened read-write (`mode=rw`, which never creates it) with
        `query_only` set, rather than with `mode=ro`: a writer killed inside a
        transaction leaves a hot journal, which only a connection that may write can
        roll back, so `mode=ro` fails with "attempt to write a readonly database"
        where this connection restores the last committed content on its first
        read. A file the user may not write is still opened, read-only; only a hot
        journal beside it then cannot be rolled back, which is a KnowledgeBaseError.
        """
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        try:
            file = self._file()
            if db is not None and file != self._local.file:  # replaced since
                db.close()
                db = None
            if db is None:
                uri = self.path.resolve().as_uri() + "?mode=rw"
                db = sqlite3.connect(uri, uri=True)
                db.execute("PRAGMA query_only = ON")
                # one connection per thread, kept while the file is the same
                self._local.db, self._local.file = db, file
            yield db
        except (OSError, sqlite3.Error) as err:
            self._local.db = None
            if db is not None:
                db.close()
            raise _error(self.path, err, "read") from err

    def _file(self) -> tuple[int, int]:
        """Which file the path names now: its device and inode."""
        stat = self.path.stat()
        return stat.st_dev, stat.st_ino

    def search(
        self,
        query: str,
        k: int = 8,
        *,
        op: str = "OR",
        doc_id: str | None = None,
        exclude: Collection[str] = (),
        among: Collection[str] | None = None,
    ) -> list[Passage]:
        """The `k` best passages for the content words of `query` (BM25).

        `op="AND"` requires every word; `doc_id` keeps one document's passages,
        `among` those of the documents with these ids; passages whose ids are
        in `exclude` are left out.
        """
        expr = match_query(keywords(query), op=op)
        if not expr:
            return []
        sql = (
            "SELECT p.passage_id, p.doc_id, p.title, d.url, p.section, p.text,"
            " -bm25(passages, 0, 0, ?, ?, ?) AS score"
            " FROM passages p JOIN documents d USING (doc_id)"
            " WHERE passages MATCH ? AND (? IS NULL OR p.doc_id = ?)"
            " AND (? IS NULL OR p.doc_id IN (SELECT value FROM json_each(?)))"
            " AND p.passage_id NOT IN (SELECT value FROM json_each(?))"
            " ORDER BY score DESC LIMIT ?"
        )
        docs = None if among is None else json.dumps(list(among))
        args = (
            *_WEIGHTS,
            expr,
            doc_id,
            doc_id,
            docs,
            docs,
            json.dumps(list(exclude)),
            k,
        )
        with self._reading() as db:
            rows = db.execute(sql, args).fetchall()
        return [Passage(*row) for row in rows]

    def rank_documents(
        self,
        query: str,
        k: int = 10,
        depth: int = 200,
        among: Collection[str] | None = None,
    ) -> list[Passage]:
        """The best passage of each of the `k` best documents for `query`.

        `among` keeps the documents with these ids.
        """
        best: dict[str, Passage] = {}
        for hit in self.search(query, depth, among=among):
            best.setdefault(hit.doc_id, hit)
        return sorted(best.values(), key=lambda p: p.score, reverse=True)[:k]

    def leads(self) -> dict[str, str]:
        """Each document's title and lead (its first passage), by doc id."""
        with self._reading() as db:
            rows = db.execute(
                "SELECT doc_id, title || '\n' || text FROM passages"
                " WHERE passage_id = doc_id || '#0'"
            )
            return dict(rows.fetchall())

    def passage(self, passage_id: str) -> Passage | None:
        """The passage with this id, or None."""
        return self.passages([passage_id]).get(passage_id)

    def in_period(self, doc: Passage, period: set[str]) -> bool:
        """Whether a passage's document is of the period: a year of it is named.

        The year must be in the document's title, in its lead's opening
        paragraph (which says what the document is about; later paragraphs
        may date other things), or in the heading of this passage's section (a
        document of another kind with a section on an event of the period).
        With no period, every document is.
        """
        if not period:
            return True
        lead = self.passage(lead_id(doc.doc_id))
        said = f"{doc.title} {opening(lead.text) if lead else ''} {doc.section}"
        return bool(period & years(said))

    def lead_and_sections(self) -> list[tuple[str, bool, str, str]]:
        """Every passage as (doc_id, whether it is the lead, section, lead text).

        Only a lead's text is read; other passages give an empty one.
        """
        lead = "passage_id = doc_id || '#0'"
        sql = f"SELECT doc_id, {lead}, section, CASE WHEN {lead} THEN text ELSE '' END"
        with self._reading() as db:
            rows = db.execute(f"{sql} FROM passages")
            return [(d, bool(first), s, t) for d, first, s, t in rows]

    def passages(self, passage_ids: Iterable[str]) -> dict[str, Passage]:
        """The passages with these ids, by id; unknown ids are left out.

        Passage ids are not indexed by FTS5, so they are found by row id, from a
        map of the file's rows, read anew only when an id is missing and the file
        changed since (it was ingested into).
        """
        ids = list(dict.fromkeys(passage_ids))
        with self._reading() as db:
            found = self._by_rowid(db, ids)
            missing = [i for i in ids if i not in found]
            if missing:
                if self._rowids_version != self.version():
                    self._refresh(db)
                found |= self._by_rowid(db, missing)  # or another thread did
        return found

    def _by_rowid(self, db: sqlite3.Connection, ids: list[str]) -> dict[str, Passage]:
        rows = [(self._rowids[i], i) for i in ids if i in self._rowids]
        sql = (
            "SELECT p.passage_id, p.doc_id, p.title, d.url, p.section, p.text, 0.0"
            " FROM passages p JOIN documents d USING (doc_id)"
            " WHERE p.rowid = ? AND p.passage_id = ?"
        )
        found = {}
        for rowid, passage_id in rows:
            row = db.execute(sql, (rowid, passage_id)).fetchone()
            if row:
                found[passage_id] = Passage(*row)
        return found

    def _refresh(self, db: sqlite3.Connection) -> None:
        """Read the passage ids' row ids anew, for the file's current version."""
        version = self.version()
        self._rowids = dict(
            db.execute("SELECT passage_id, rowid FROM passages").fetchall()
        )
        self._rowids_version = version

    def version(self) -> tuple[int, int, int, int]:
        """Which content the file holds: its device, inode, mtime and size."""
        stat = self.path.stat()
        return stat.st_dev, stat.st_ino, stat.st_mtime_ns, stat.st_size

    def document_frequencies(self, words: Iterable[str]) -> dict[str, int]:
        """In how many passages each word occurs."""
        counts: dict[str, int] = defaultdict(int)
        with self._reading() as db:
            for word in dict.fromkeys(words):
                expr = match_query([word])
                if expr:
                    counts[word] = db.execute(
                        "SELECT count(*) FROM passages WHERE passages MATCH ?", (expr,)
                    ).fetchone()[0]
        return counts


def ingest(kb_path: Path | str, sources: Iterable[Path | str]) -> IngestResult:
    """Add the documents under `sources` to the knowledge base at `kb_path`.

    A new or empty file becomes a knowledge base; an existing file must be one of
    this format. Every source is read before the file is opened, and all documents
    are written in one transaction, so a failure leaves the previous content as it
    was. Re-ingesting a file replaces its document, whatever path led to it (see
    `_doc_id`).

    Raises:
        CorpusError: A source does not exist or holds no document.
        KnowledgeBaseError: `kb_path` is not a knowledge base of this format, or
            cannot be written.
    """
    docs, skipped = _read_sources(sources)
    with _writing(Path(kb_path)) as db:
        n_passages = sum(_insert(db, doc, _doc_id(db, doc)) for doc in docs)
    return IngestResult(len(docs), n_passages, tuple(skipped))


def _read_sources(
    sources: Iterable[Path | str],
) -> tuple[list[Document], list[Skipped]]:
    """The documents under `sources`, one per file, and the files left out."""
    docs: dict[Path, Document] = {}
    skipped: list[Skipped] = []
    for item in (item for src in sources for item in read_documents(Path(src))):
        if isinstance(item, Skipped):
            skipped.append(item)
        elif first := docs.get(item.source):
            skipped.append(Skipped(item.path, f"read already as {first.doc_id}"))
        else:
            docs[item.source] = item
    return list(docs.values()), skipped


@contextmanager
def _writing(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection to the knowledge base at `path` inside one write transaction.

    The transaction commits when the block ends and is rolled back when it fails;
    a file this call created is then removed.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        created = not path.exists()
        db = sqlite3.connect(path, isolation_level=None)
    except (OSError, sqlite3.Error) as err:
        raise _error(path, err, "write") from err
    try:
        # Closing the connection without COMMIT rolls the transaction back.
        with closing(db):
            db.execute("BEGIN IMMEDIATE")
            _prepare(db, path)
            yield db
            db.execute("COMMIT")
    except BaseException as err:
        if created:
            path.unlink(missing_ok=True)
        if isinstance(err, OSError | sqlite3.Error):
            raise _error(path, err, "write") from err
        raise


def _prepare(db: sqlite3.Connection, path: Path) -> None:
    """Initialise a new database as a knowledge base, or check that it is one."""
    if (
        _marks(db) == (0, 0)
        and not db.execute("SELECT 1 FROM sqlite_master").fetchone()
    ):
        for statement in _SCHEMA:
            db.execute(statement)
    else:
        _check_format(db, path)


def _check_format(db: sqlite3.Connection, path: Path) -> None:
    """Raise KnowledgeBaseError unless `db` is a knowledge base of this format."""
    app_id, version = _marks(db)
    if app_id != APPLICATION_ID:
        raise KnowledgeBaseError(
            f"{path} is not a knowledge base: its SQLite application_id is {app_id},"
            f" delegator's is {APPLICATION_ID}"
        )
    if version != FORMAT_VERSION:
        raise KnowledgeBaseError(
            f"{path} is a knowledge base of format {version}, this delegator reads"
            f" format {FORMAT_VERSION}; rebuild it in a new file with"
            " `delegator ingest PATH --kb NEW_FILE`"
        )


def _marks(db: sqlite3.Connection) -> tuple[int, int]:
    """The SQLite application_id and user_version of `db`."""
    app_id = db.execute("PRAGMA application_id").fetchone()[0]
    version = db.execute("PRAGMA user_version").fetchone()[0]
    return int(app_id), int(version)


def _doc_id(db: sqlite3.Connection, doc: Document) -> str:
    """The id of `doc` in the knowledge base.

    The documents table keeps the resolved path of each document's file, and a file
    keeps the id it got first, so the spelling of the ingested path (relative,
    absolute, through a link or a parent folder) never duplicates a document. A new
    file gets the id `read_documents` proposes, its path below the ingested folder,
    unless a document of another file that still exists holds that id; then a
    short hash of its resolved path tells the two apart.
    """
    source = str(doc.source)
    if row := db.execute(
        "SELECT doc_id FROM documents WHERE source = ?", (source,)
    ).fetchone():
        return str(row[0])
    holder = db.execute(
        "SELECT source FROM documents WHERE doc_id = ?", (doc.doc_id,)
    ).fetchone()
    if holder is None or not Path(holder[0]).is_file():
        return doc.doc_id
    return f"{doc.doc_id}~{hashlib.sha256(source.encode()).hexdigest()[:8]}"


def _insert(db: sqlite3.Connection, doc: Document, doc_id: str) -> int:
    db.execute("DELETE FROM passages WHERE doc_id = ?", (doc_id,))
    db.execute(
        "INSERT OR REPLACE INTO documents VALUES (?, ?, ?, ?)",
        (doc_id, doc.title, doc.url, str(doc.source)),
    )
    rows = [
        (f"{doc_id}#{n}", doc_id, doc.title, section, text)
        for n, (section, text) in enumerate(passages(doc))
    ]
    db.executemany("INSERT INTO passages VALUES (?, ?, ?, ?, ?)", rows)
    return len(rows)


def _error(path: Path, err: OSError | sqlite3.Error, doing: str) -> KnowledgeBaseError:
    """`err`, met while `doing` ("read", "write") the file at `path`, explained."""
    if isinstance(err, sqlite3.Error) and err.sqlite_errorname == "SQLITE_NOTADB":
        return KnowledgeBaseError(f"{path} is not a knowledge base: {err}")
    reason = (err.strerror if isinstance(err, OSError) else None) or str(err)
    return KnowledgeBaseError(f"cannot {doing} the knowledge base at {path}: {reason}")


@functools.lru_cache(maxsize=8)
def knowledge_base(kb_path: str = "") -> KnowledgeBase:
    """The knowledge base at `kb_path`, or the shipped FreshWiki index, opened once.

    The shipped index is built on first use, and rebuilt when it cannot be opened
    (as one written in an older format). The most recently used few stay open:
    the cache is bounded, whatever paths callers send.
    """
    if kb_path:
        return KnowledgeBase(kb_path)
    try:
        return KnowledgeBase(DEFAULT_KB_PATH)
    except KnowledgeBaseError:
        build_default()
        return KnowledgeBase(DEFAULT_KB_PATH)


def build_default() -> Path:
    """Build the index of the shipped corpus atomically (safe under concurrency)."""
    try:
        DEFAULT_KB_PATH.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".sqlite", dir=DEFAULT_KB_PATH.parent)
        os.close(fd)
        try:
            ingest(tmp, [DEFAULT_CORPUS])
            os.replace(tmp, DEFAULT_KB_PATH)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError as err:
        raise _error(DEFAULT_KB_PATH, err, "write") from err
    return DEFAULT_KB_PATH
