"""Ingest of bad input: every bad file skipped with its reason, nothing lost."""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

import runtime.kb
from cli.main import main
from runtime.corpus import MAX_PASSAGE_CHARS
from runtime.kb import (
    APPLICATION_ID,
    KnowledgeBase,
    KnowledgeBaseError,
    ingest,
    knowledge_base,
)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "ingest"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def rows(kb_path: Path, sql: str) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(kb_path)) as db:
        return db.execute(sql).fetchall()


def doc_ids(kb_path: Path) -> list[str]:
    return [r[0] for r in rows(kb_path, "SELECT doc_id FROM documents ORDER BY 1")]


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A folder holding one good document."""
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(FIXTURES / "good.md", folder)
    return folder


@pytest.fixture
def kb(tmp_path: Path, docs: Path) -> Path:
    """A knowledge base built from `docs`."""
    path = tmp_path / "kb.sqlite"
    ingest(path, [docs])
    return path


def fixture(name: str) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        shutil.copy(FIXTURES / name, path)

    return make


def content(data: bytes) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        path.write_bytes(data)

    return make


def symlink(target: str) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        path.symlink_to(target)

    return make


def larger_than_64_mib(path: Path) -> None:
    with path.open("wb") as fh:
        fh.truncate(64 * 2**20 + 1)


ELF = b"\x7fELF\x02\x01\x01\x00" + bytes(56) + b"\x00\x01Text after the header."
DEEP = b'{"content": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"

BAD_FILES = [
    ("program.txt", content(ELF), r"binary content \(NUL bytes\), not text"),
    ("latin1.md", content("# Café\n".encode("latin-1")), r"not UTF-8 text \(byte 0xe9"),
    ("cut16.md", content(codecs.BOM_UTF16_LE + b"#\x00 "), r"not UTF-16 text \(byte"),
    ("huge.md", larger_than_64_mib, r"larger than 64 MiB"),
    ("content_is_text.json", fixture("content_is_text.json"), r"'content' is not a"),
    (
        "sentences_not_objects.json",
        fixture("sentences_not_objects.json"),
        r"'section_content' is not a list of sentences",
    ),
    ("not_an_article.json", fixture("not_an_article.json"), r"no 'content'"),
    ("broken.json", fixture("broken.json"), r"not valid JSON \(Expecting"),
    ("deep.json", content(DEEP), r"JSON nested too deeply"),
    ("declaration.html", fixture("declaration.html"), r"malformed HTML"),
    ("blank.md", content(b"# Blank\n\n\n## References\n\n[1] x\n"), r"^no text$"),
    ("passwd.txt", symlink("/etc/passwd"), r"symbolic link out of .*: /etc/passwd"),
    ("outside", symlink("/usr"), r"symbolic link out of .*: /usr"),
    ("dangling.md", symlink("nowhere.md"), r"not a regular file"),
    ("pipe.md", os.mkfifo, r"not a regular file"),
    ("caf\udce9.md", content(b"# Cafe\n\nText.\n"), r"path is not valid UTF-8"),
]


@pytest.mark.parametrize(("name", "make", "reason"), BAD_FILES)
def test_a_bad_file_is_skipped_with_its_reason(
    docs: Path, tmp_path: Path, name: str, make: Callable[[Path], None], reason: str
) -> None:
    make(docs / name)
    kb_path = tmp_path / "kb.sqlite"
    result = ingest(kb_path, [docs])
    assert (result.documents, result.passages) == (1, 1)
    [skipped] = result.skipped
    assert skipped.path == docs / name
    assert re.search(reason, skipped.reason), skipped.reason
    assert doc_ids(kb_path) == ["good"]


def test_a_folder_of_good_and_bad_files(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(FIXTURES, docs)
    (tmp_path / "outside.md").write_text("# Outside\n\nNot to be read.\n")
    (docs / "program.txt").write_bytes(ELF)
    (docs / "passwd.txt").symlink_to("/etc/passwd")
    (docs / "escape.md").symlink_to(tmp_path / "outside.md")
    (docs / "alias.md").symlink_to("good.md")
    sentences = " ".join(f"Glacier {i} lost ice last summer." for i in range(60_000))
    line = f"{sentences} {'z' * 5000}"
    (docs / "huge.txt").write_text(line)

    kb_path = tmp_path / "kb.sqlite"
    result = ingest(kb_path, [docs])

    assert doc_ids(kb_path) == ["Storm", "good", "huge"]
    assert {s.path.name: s.reason.split(" (")[0] for s in result.skipped} == {
        "broken.json": "not valid JSON",
        "content_is_text.json": "not a FreshWiki article: 'content' is not a list "
        "of sections",
        "declaration.html": "malformed HTML",
        "escape.md": f"symbolic link out of {docs}: {tmp_path / 'outside.md'}",
        "alias.md": "read already as good",
        "not_an_article.json": "not a FreshWiki article: no 'content'",
        "passwd.txt": f"symbolic link out of {docs}: /etc/passwd",
        "program.txt": "binary content",
        "sentences_not_objects.json": "not a FreshWiki article: 'section_content' is "
        "not a list of sentences",
    }
    texts = [
        text
        for (text,) in rows(
            kb_path, "SELECT text FROM passages WHERE doc_id = 'huge' ORDER BY rowid"
        )
    ]
    assert max(len(t) for t in texts) <= MAX_PASSAGE_CHARS
    assert len(texts) >= len(line) / MAX_PASSAGE_CHARS
    assert texts[0].endswith("summer.") and texts[-1] == "z" * (5000 % 1500)
    assert "".join("".join(t.split()) for t in texts) == "".join(line.split())
    assert result.passages == len(rows(kb_path, "SELECT 1 FROM passages"))
    assert not KnowledgeBase(kb_path).search("root outside", 5)


def test_the_cli_lists_what_it_skipped(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (docs / "program.txt").write_bytes(ELF)
    assert main(["ingest", str(docs), "--kb", str(tmp_path / "kb.sqlite")]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "added 1 document(s), 1 passage(s)" in err
    assert f"skipped 1 file(s): {docs / 'program.txt'}: binary content" in err


def other_application(path: Path) -> None:
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE documents (doc_id TEXT PRIMARY KEY, title, url)")
        db.execute("INSERT INTO documents VALUES ('good', 'Their row', 'x')")


def geopackage(path: Path) -> None:
    other_application(path)
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA application_id = 0x47504B47")


def later_format(path: Path) -> None:
    ingest(path, [FIXTURES / "good.md"])
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA user_version = 2")


def text_file(path: Path) -> None:
    path.write_text("not sqlite at all, but long enough to have a header" * 3)


REFUSED = [
    (other_application, r"is not a knowledge base: its SQLite application_id is 0,"),
    (geopackage, r"is not a knowledge base: its SQLite application_id is 1196444487"),
    (later_format, r"is a knowledge base of format 2, this delegator reads format 1"),
    (text_file, r"is not a knowledge base: file is not a database"),
]


@pytest.mark.parametrize(("make", "message"), REFUSED)
def test_a_file_that_is_not_a_knowledge_base_is_refused_untouched(
    docs: Path, tmp_path: Path, make: Callable[[Path], None], message: str
) -> None:
    path = tmp_path / "their.sqlite"
    make(path)
    before = digest(path)
    with pytest.raises(KnowledgeBaseError, match=re.escape(str(path)) + " " + message):
        ingest(path, [docs])
    assert digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "their.sqlite"]
    with pytest.raises(KnowledgeBaseError, match=message):
        KnowledgeBase(path)


def where_nobody_writes(path: Path) -> Path:
    return Path("/proc/delegator-kb.sqlite")  # not even root may create files here


def under_a_file(path: Path) -> Path:
    return path / "kb.sqlite"


UNWRITABLE = [
    pytest.param(under_a_file, "File exists", id="parent is a file"),
    pytest.param(where_nobody_writes, "unable to open", id="read-only place"),
]


@pytest.mark.parametrize(("place", "reason"), UNWRITABLE)
def test_ingest_into_a_read_only_place_is_a_clear_error(
    kb: Path, docs: Path, place: Callable[[Path], Path], reason: str
) -> None:
    before = digest(kb)
    target = place(kb)
    try:
        with pytest.raises(KnowledgeBaseError, match=f"cannot write .* {reason}"):
            ingest(target, [docs])
    finally:
        kb.parent.chmod(0o755)
    assert digest(kb) == before
    assert not target.exists() or target == kb


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Connections that may grow their database by two pages only."""
    connect = sqlite3.connect

    def small(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        db: sqlite3.Connection = connect(*args, **kwargs)
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        db.execute(f"PRAGMA max_page_count = {pages + 2}")
        return db

    monkeypatch.setattr(sqlite3, "connect", small)


def test_a_failed_ingest_leaves_the_knowledge_base_as_it_was(
    kb: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    more = tmp_path / "more"
    more.mkdir()
    (more / "long.md").write_text("# Long\n\n" + "Ice and snow. " * 20_000)
    before = digest(kb)
    request.getfixturevalue("full_disk")
    with pytest.raises(KnowledgeBaseError, match=f"cannot write .*{kb}.*full"):
        ingest(kb, [more])
    with pytest.raises(KnowledgeBaseError, match="full"):
        ingest(tmp_path / "new.sqlite", [more])
    assert digest(kb) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "kb.sqlite", "more"]


KILLED_WRITER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA cache_size = 1")  # spill changed pages into the file early
db.execute("BEGIN IMMEDIATE")
db.execute("DELETE FROM passages")
db.execute("DELETE FROM documents")
print("written", flush=True)
time.sleep(60)
"""


def test_a_journal_left_by_a_killed_ingest_is_rolled_back(kb: Path) -> None:
    before = digest(kb)
    writer = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(kb)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None and writer.stdout.readline() == "written\n"
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    journal = kb.with_name(kb.name + "-journal")
    assert journal.is_file() and digest(kb) != before
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        with closing(sqlite3.connect(kb.as_uri() + "?mode=ro", uri=True)) as db:
            db.execute("SELECT count(*) FROM documents").fetchone()

    found = KnowledgeBase(kb).search("alpine glaciers", 3)

    assert [p.passage_id for p in found] == ["good#0"]
    assert not journal.exists() and digest(kb) == before


def garbage_pages(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:4096] + b"\xff" * (len(data) - 4096))


def dropped_table(path: Path) -> None:
    with closing(sqlite3.connect(path)) as db:
        db.execute("DROP TABLE passages")


READS: dict[str, Callable[[KnowledgeBase], object]] = {
    "search": lambda kb: kb.search("glaciers"),
    "rank_documents": lambda kb: kb.rank_documents("glaciers"),
    "passage": lambda kb: kb.passage("good#0"),
    "passages": lambda kb: kb.passages(["good#0"]),
    "document_frequencies": lambda kb: kb.document_frequencies(["glaciers"]),
}


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (garbage_pages, "malformed|vtable constructor failed"),
        (dropped_table, "no such table: passages"),
    ],
)
@pytest.mark.parametrize("read", READS.values(), ids=READS.keys())
def test_damage_found_mid_run_is_a_clear_error(
    kb: Path,
    damage: Callable[[Path], None],
    message: str,
    read: Callable[[KnowledgeBase], object],
) -> None:
    opened = KnowledgeBase(kb)
    damage(kb)
    with pytest.raises(KnowledgeBaseError, match=f"cannot read .*{kb}: .*({message})"):
        read(opened)
    with pytest.raises(KnowledgeBaseError, match=message):
        KnowledgeBase(kb)


@pytest.fixture
def nested(tmp_path: Path) -> Path:
    """`corpus/docs` holding two documents, with a link to it beside `corpus`."""
    docs = tmp_path / "corpus" / "docs"
    docs.mkdir(parents=True)
    shutil.copy(FIXTURES / "good.md", docs)
    shutil.copy(FIXTURES / "Storm.json", docs)
    (tmp_path / "link").symlink_to(docs)
    return docs


@pytest.mark.parametrize(
    "spelling",
    [
        "corpus",
        "corpus/docs",
        "./corpus/../corpus/docs/",
        "link",
        "corpus/docs/good.md",
    ],
)
def test_the_same_files_through_another_path_are_not_duplicated(
    nested: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelling: str
) -> None:
    kb_path = tmp_path / "kb.sqlite"
    ingest(kb_path, [nested])
    before = rows(kb_path, "SELECT * FROM documents ORDER BY 1")
    monkeypatch.chdir(tmp_path)
    ingest(kb_path, [Path(spelling)])
    assert rows(kb_path, "SELECT * FROM documents ORDER BY 1") == before
    assert doc_ids(kb_path) == ["Storm", "good"]
    assert KnowledgeBase(kb_path).size == 3


def test_a_new_file_never_takes_the_id_of_another(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "notes.md").write_text(f"# Notes\n\nNotes {folder}.\n")
    kb_path = tmp_path / "kb.sqlite"
    ingest(kb_path, [tmp_path / "a"])
    ingest(kb_path, [tmp_path / "b"])
    source = str((tmp_path / "b" / "notes.md").resolve())
    other = "notes~" + hashlib.sha256(source.encode()).hexdigest()[:8]
    assert doc_ids(kb_path) == ["notes", other]
    assert KnowledgeBase(kb_path).passage(f"{other}#0") is not None


def test_a_moved_file_keeps_its_id(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "notes.md").write_text("# Notes\n\nFirst words.\n")
    kb_path = tmp_path / "kb.sqlite"
    ingest(kb_path, [tmp_path / "a"])
    (tmp_path / "a").rename(tmp_path / "b")
    ingest(kb_path, [tmp_path / "b"])
    assert rows(kb_path, "SELECT doc_id, source FROM documents") == [
        ("notes", str((tmp_path / "b" / "notes.md").resolve()))
    ]


def test_a_knowledge_base_is_marked_as_delegators(kb: Path) -> None:
    assert rows(kb, "PRAGMA application_id") == [(APPLICATION_ID,)]
    assert rows(kb, "PRAGMA user_version") == [(1,)]


def test_the_shipped_index_is_rebuilt_when_it_cannot_be_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = tmp_path / "kb.sqlite"
    other_application(shipped)
    monkeypatch.setattr(runtime.kb, "DEFAULT_KB_PATH", shipped)
    monkeypatch.setattr(runtime.kb, "DEFAULT_CORPUS", FIXTURES)
    opened = knowledge_base.__wrapped__("")
    assert opened.path == shipped
    assert doc_ids(shipped) == ["Storm", "good"]


def test_an_articles_apparatus_is_never_a_passage(tmp_path: Path) -> None:
    """References, their subsections and source lists are not evidence."""
    (tmp_path / "Storm.md").write_text(
        "# Storm\n\nThe storm struck the coast in 2022.\n\n"
        "# Damage\n\nRoofs were torn off across the region.\n\n"
        "## Primary sources\n\nThese references are preceded by a dagger.\n\n"
        "# References\n\n## Works by the agency\n\nReport on the storm, 2023.\n\n"
        "# Bibliography\n\nA book about storms.\n"
    )
    kb_path = tmp_path / "kb.sqlite"
    ingest(kb_path, [tmp_path / "Storm.md"])
    sections = [s for (s,) in rows(kb_path, "SELECT section FROM passages")]
    assert sections == ["Summary", "Damage"]


def test_a_file_of_utf16_text_is_read_as_text(tmp_path: Path) -> None:
    text = "# Comets\n\nComets are icy bodies that grow tails near the Sun.\n"
    (tmp_path / "Comets.md").write_bytes(text.encode("utf-16"))
    kb_path = tmp_path / "kb.sqlite"
    result = ingest(kb_path, [tmp_path / "Comets.md"])
    assert (result.documents, result.skipped) == (1, ())
    texts = [t for (t,) in rows(kb_path, "SELECT text FROM passages")]
    assert texts == ["Comets are icy bodies that grow tails near the Sun."]


def test_an_articles_inline_marks_are_never_its_text(tmp_path: Path) -> None:
    """Reference numbers and wiki cleanup tags go; an editor's insertion stays."""
    article = {
        "title": "Storm",
        "summary": "The storm struck in 2022.[1] It  was  strong.[citation needed]",
        "content": [
            {
                "section_title": "Damage",
                "section_content": [
                    {"sentence": "Roofs were torn off[when?] across the region."},
                    {"sentence": "Sales [needs update] fell, he said [it] would."},
                ],
            }
        ],
    }
    (tmp_path / "Storm.json").write_text(json.dumps(article))
    kb_path = tmp_path / "kb.sqlite"
    ingest(kb_path, [tmp_path / "Storm.json"])
    texts = [t for (t,) in rows(kb_path, "SELECT text FROM passages")]
    assert texts == [
        "The storm struck in 2022. It was strong.",
        "Roofs were torn off across the region. Sales fell, he said [it] would.",
    ]
