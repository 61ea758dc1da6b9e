"""Reading document files into titled, sectioned passages."""

from __future__ import annotations

import codecs
import csv
import html
import io
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from runtime.text import sentences

SUFFIXES = (".md", ".txt", ".html", ".htm", ".json")
MAX_PASSAGE_CHARS = 1500
MAX_PARAGRAPH_CHARS = 8 * MAX_PASSAGE_CHARS
"""A longer paragraph is cut into passages of at most MAX_PASSAGE_CHARS."""
MAX_TITLE_CHARS = 300
"""A longer line is never a title or a heading; a longer JSON title is cut."""
MAX_FILE_BYTES = 64 * 2**20
"""Larger files are skipped unread."""
TOPIC_LIST = "topic_list.csv"
# Marks that are no part of the text: reference numbers ("[12]") and the inline
# cleanup tags of wikis ("[citation needed]", "[when?]", "[needs update]").
_REFERENCE_MARK = re.compile(
    r"(?<!\s)\s*\[(?:\d+|(?:[a-z]+ )*needed|(?:who|what|when|where|which|why|how)\?"
    r"|(?:needs )?update)\]"
)
_UTF16_MARKS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_SPACES = re.compile(r"[ \t]{2,}")
_HEADING = re.compile(r"^(#{1,6})\s+(.*\S)\s*$")
# The longest run of words that fits a passage, or a hard cut inside one long word.
_PIECE = re.compile(
    rf"\S(?:.{{0,{MAX_PASSAGE_CHARS - 1}}}(?=\s|$)|\S{{0,{MAX_PASSAGE_CHARS - 1}}})"
)
_SKIPPED_SECTIONS = {
    "see also",
    "references",
    "further reading",
    "external links",
    "notes",
    "footnotes",
    "citations",
    "sources",
    "primary sources",
    "secondary sources",
    "bibliography",
    "works cited",
}
"""Headings of an article's apparatus (references, navigation): never evidence,
nor is any section below one."""


@dataclass(frozen=True)
class Section:
    """A heading path and the text under it."""

    heading: str
    text: str


@dataclass(frozen=True)
class Document:
    """One source document, split at its headings.

    Attributes:
        doc_id: The id proposed for it: its path below the ingested folder, without
            suffix, or its file name without suffix when the file was named.
        title: Its title.
        url: Where it comes from.
        sections: Its text, split at its headings.
        path: Its file, as found.
        source: The resolved path of its file.
    """

    doc_id: str
    title: str
    url: str | None
    sections: tuple[Section, ...]
    path: Path
    source: Path


@dataclass(frozen=True, order=True)
class Skipped:
    """A file left out of the corpus, and why."""

    path: Path
    reason: str


class CorpusError(ValueError):
    """A path that holds no readable documents."""


class _Unusable(Exception):
    """The file cannot be a document; the message says why."""


def read_documents(path: Path) -> Iterator[Document | Skipped]:
    """Yield the documents of a file, or of every supported file below a folder.

    Files are chosen by suffix (SUFFIXES) and read only when their content is text:
    UTF-8 without NUL bytes, at most MAX_FILE_BYTES. A file that cannot be a
    document is yielded as a Skipped with the reason. Below a folder, symbolic links
    are followed only to files inside it.

    Raises:
        CorpusError: `path` does not exist or holds no document.
    """
    if not path.exists():
        raise CorpusError(f"corpus path does not exist: {path}")
    skipped: list[Skipped] = []
    found = False
    for item in _read_all(path):
        if isinstance(item, Skipped):
            skipped.append(item)
        else:
            found = True
        yield item
    if not found:
        reasons = "".join(f"; skipped {s.path}: {s.reason}" for s in skipped[:5])
        raise CorpusError(
            f"no {'/'.join(SUFFIXES)} documents with text under {path}{reasons}"
        )


def passages(doc: Document) -> Iterator[tuple[str, str]]:
    """Yield (section, text) chunks of about MAX_PASSAGE_CHARS.

    Paragraphs are packed together up to MAX_PASSAGE_CHARS, not counting the line
    breaks between them; a paragraph longer than MAX_PARAGRAPH_CHARS is cut.
    """
    for section in doc.sections:
        for text in _chunks(section.text):
            yield section.heading, text


def _chunks(text: str) -> Iterator[str]:
    """The paragraphs of a section's text, packed into passages."""
    chunk: list[str] = []
    size = 0
    for para in (p.strip() for p in text.split("\n")):
        if not para:
            continue
        if chunk and size + len(para) > MAX_PASSAGE_CHARS:
            yield "\n".join(chunk)
            chunk, size = [], 0
        if len(para) > MAX_PARAGRAPH_CHARS:
            yield from _cut(para)
            continue
        chunk.append(para)
        size += len(para)
    if chunk:
        yield "\n".join(chunk)


def _cut(paragraph: str) -> Iterator[str]:
    """The paragraph in parts of at most MAX_PASSAGE_CHARS.

    A part holds whole sentences; a longer sentence is cut between words, and a
    longer word anywhere.
    """
    part = ""
    for piece in (
        m.group().rstrip()
        for sentence in sentences(paragraph)
        for m in _PIECE.finditer(sentence)
    ):
        if part and len(part) + 1 + len(piece) > MAX_PASSAGE_CHARS:
            yield part
            part = ""
        part = f"{part} {piece}" if part else piece
    if part:
        yield part


def _read_all(path: Path) -> Iterator[Document | Skipped]:
    """The documents of the file or folder `path`, and the files left out."""
    folder = path if path.is_dir() else path.parent
    urls: dict[str, str] = {}
    try:
        urls = _topic_list_urls(folder / TOPIC_LIST)
    except _Unusable as err:
        yield Skipped(folder / TOPIC_LIST, str(err))
    if not path.is_dir():
        yield _read(path, path.stem, urls)
        return
    for item in _walk(path):
        if isinstance(item, Skipped):
            yield item
        else:
            yield _read(item, item.relative_to(path).with_suffix("").as_posix(), urls)


def _walk(folder: Path) -> Iterator[Path | Skipped]:
    """The files with a supported suffix below `folder`, links after other files.

    Symlinked folders are not entered: what they hold inside `folder` is reached by
    its own path. A symbolic link that leads out of `folder` is skipped.
    """
    root = folder.resolve()
    files: list[Path] = []
    skipped: list[Skipped] = []
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            entries = list(current.iterdir())
        except OSError as err:
            skipped.append(Skipped(current, f"cannot list the folder: {_why(err)}"))
            continue
        for entry in entries:
            target = Path(os.path.realpath(entry))
            if entry.is_symlink() and not target.is_relative_to(root):
                skipped.append(Skipped(entry, f"symbolic link out of {root}: {target}"))
            elif entry.is_dir():
                if not entry.is_symlink():
                    pending.append(entry)
            elif entry.suffix.lower() in SUFFIXES:
                files.append(entry)
    yield from sorted(skipped)
    # A file reached both by its path and by a link keeps the id of its path.
    yield from sorted(files, key=lambda file: (file.is_symlink(), file))


def _read(file: Path, doc_id: str, urls: dict[str, str]) -> Document | Skipped:
    """The document in `file`, or why it cannot be one."""
    try:
        doc = _document(file, doc_id, urls)
    except _Unusable as err:
        return Skipped(file, str(err))
    return doc if doc.sections else Skipped(file, "no text")


def _document(file: Path, doc_id: str, urls: dict[str, str]) -> Document:
    """The document in a text file; raises _Unusable when it cannot be one."""
    suffix = file.suffix.lower()
    if suffix not in SUFFIXES:
        raise _Unusable(f"not a {'/'.join(SUFFIXES)} file")
    if not file.is_file():
        raise _Unusable("not a regular file")
    source = file.resolve()
    if not _is_utf8(doc_id + str(source)):
        raise _Unusable("path is not valid UTF-8")
    raw = _text(file)
    if suffix == ".json":
        return _from_freshwiki_json(file, doc_id, raw)
    if suffix in (".html", ".htm"):
        raw = _html_to_markdown(raw)
    lines = raw.strip().splitlines()
    title = file.stem.replace("_", " ")
    first = lines[0] if lines else ""
    if suffix == ".txt" and first.strip() and not _heading(first):
        if len(first) <= MAX_TITLE_CHARS:
            title = lines.pop(0).strip().replace("_", " ")
    elif (m := _heading(first)) and len(m.group(1)) == 1:
        title = m.group(2)
        lines.pop(0)
    return Document(
        doc_id=doc_id,
        title=title,
        url=urls.get(title) or source.as_uri(),
        sections=tuple(_sections(lines)),
        path=file,
        source=source,
    )


def _text(file: Path) -> str:
    """The content of `file` if it is text, not too large.

    Text is UTF-8, or UTF-16 when the file starts with its byte order mark,
    and holds no NUL character.
    """
    try:
        with file.open("rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        raise _Unusable(f"cannot read: {_why(err)}") from err
    if len(data) > MAX_FILE_BYTES:
        raise _Unusable(f"larger than {MAX_FILE_BYTES // 2**20} MiB")
    utf16 = data.startswith(_UTF16_MARKS)
    if not utf16 and b"\0" in data:
        raise _Unusable("binary content (NUL bytes), not text")
    try:
        text = data.decode("utf-16" if utf16 else "utf-8-sig")
    except UnicodeDecodeError as err:
        raise _Unusable(
            f"not {'UTF-16' if utf16 else 'UTF-8'} text "
            f"(byte {data[err.start]:#04x} at offset {err.start})"
        ) from err
    if "\0" in text:
        raise _Unusable("binary content (NUL characters), not text")
    return text


def _is_utf8(text: str) -> bool:
    """Whether `text` holds no lone surrogate, as undecodable bytes of a path do."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _why(err: OSError) -> str:
    return err.strerror or str(err)


def _heading(line: str) -> re.Match[str] | None:
    return _HEADING.match(line) if len(line) <= MAX_TITLE_CHARS else None


def _sections(lines: list[str]) -> Iterator[Section]:
    path: list[str] = ["Summary"]
    body: list[str] = []
    levels: list[int] = [0]

    def flush() -> Iterator[Section]:
        text = _REFERENCE_MARK.sub("", "\n".join(body)).strip()
        if text and not any(_is_apparatus(heading) for heading in path):
            yield Section(" > ".join(path), text)

    for line in lines:
        m = _heading(line)
        if not m:
            body.append(line)
            continue
        yield from flush()
        body = []
        level = len(m.group(1))
        while len(levels) > 1 and levels[-1] >= level:
            levels.pop()
            path.pop()
        if levels == [0] and path == ["Summary"]:
            path = []
        levels.append(level)
        path.append(m.group(2))
    yield from flush()


def _is_apparatus(heading: str) -> bool:
    """Whether a heading names references, notes or links: not the article's text."""
    return heading.strip().casefold() in _SKIPPED_SECTIONS


def _from_freshwiki_json(file: Path, doc_id: str, raw: str) -> Document:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as err:
        raise _Unusable(f"not valid JSON ({err})") from err
    except RecursionError as err:
        raise _Unusable("JSON nested too deeply") from err
    if not isinstance(data, dict) or "content" not in data:
        raise _Unusable("not a FreshWiki article: no 'content'")
    sections = []
    if summary := _string(data.get("summary")).strip():
        sections.append(Section("Summary", _article_text(summary)))
    for part in _objects(data["content"], "'content' is not a list of sections"):
        heading = _string(part.get("section_title")).strip()[:MAX_TITLE_CHARS]
        if _is_apparatus(heading):
            continue
        sentences = _objects(
            part.get("section_content"), "'section_content' is not a list of sentences"
        )
        text = " ".join(_string(s.get("sentence")) for s in sentences)
        if text := _article_text(text).strip():
            sections.append(Section(heading or "Summary", text))
    title = _string(data.get("title"))[:MAX_TITLE_CHARS] or file.stem
    url = _string(data.get("url"))
    return Document(
        doc_id,
        title.replace("_", " "),
        url or None,
        tuple(sections),
        file,
        file.resolve(),
    )


def _article_text(text: str) -> str:
    """An article's text without its marks, runs of spaces made one."""
    return _SPACES.sub(" ", _REFERENCE_MARK.sub("", text))


def _objects(value: Any, malformed: str) -> list[dict[str, Any]]:
    """The JSON objects of a list that may be null, or _Unusable(`malformed`)."""
    items = value or []
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise _Unusable(f"not a FreshWiki article: {malformed}")
    return items


def _string(value: Any) -> str:
    """A JSON string, any lone surrogate in it as "?"; "" for other values."""
    if not isinstance(value, str):
        return ""
    return value.encode(errors="replace").decode()


def _topic_list_urls(listing: Path) -> dict[str, str]:
    """FreshWiki's `topic_list.csv` (topic, url) gives the URLs of .txt articles."""
    if not listing.is_file():
        return {}
    try:
        rows = list(csv.DictReader(io.StringIO(_text(listing))))
    except csv.Error as err:
        raise _Unusable(f"not a CSV file ({err})") from err
    return {
        row["topic"]: row["url"] for row in rows if row.get("topic") and row.get("url")
    }


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.out: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self._skip += 1
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.out.append("\n" + "#" * int(tag[1]) + " ")
        elif tag in ("p", "br", "li", "div", "tr"):
            self.out.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip = max(0, self._skip - 1)
        elif tag.startswith("h") and tag[1:].isdigit():
            self.out.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.out.append(data.replace("\n", " "))


def _html_to_markdown(raw: str) -> str:
    parser = _TextExtractor()
    try:
        parser.feed(raw)
    # html.parser asserts on some malformed declarations, such as "<![=".
    except AssertionError as err:
        raise _Unusable(f"malformed HTML ({err})") from err
    text = html.unescape("".join(parser.out))
    return "\n".join(line.strip() for line in text.splitlines())
