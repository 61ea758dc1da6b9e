"""Reading document files into titled, sectioned passages."""

from __future__ import annotations

import csv
import html
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

SUFFIXES = (".md", ".txt", ".html", ".htm", ".json")
MAX_PASSAGE_CHARS = 1500
_REFERENCE_MARK = re.compile(r"\s*\[\d+\]")
_HEADING = re.compile(r"^(#{1,6})\s+(.*\S)\s*$")
_SKIPPED_SECTIONS = {
    "see also",
    "references",
    "further reading",
    "external links",
    "notes",
}


@dataclass(frozen=True)
class Section:
    """A heading path and the text under it."""

    heading: str
    text: str


@dataclass(frozen=True)
class Document:
    """One source document, split at its headings."""

    doc_id: str
    title: str
    url: str | None
    sections: tuple[Section, ...]


class CorpusError(ValueError):
    """A path that holds no readable documents."""


def read_documents(path: Path) -> Iterator[Document]:
    """Yield the documents of a file or of every supported file below a folder."""
    if not path.exists():
        raise CorpusError(f"corpus path does not exist: {path}")
    files = (
        [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    )
    urls = _topic_list_urls(path if path.is_dir() else path.parent)
    found = False
    for file in files:
        if file.suffix.lower() not in SUFFIXES:
            continue
        doc_id = file.stem if file == path else file.relative_to(path).with_suffix("")
        doc = _read(file, Path(doc_id).as_posix(), urls)
        if doc is not None and doc.sections:
            found = True
            yield doc
    if not found:
        raise CorpusError(f"no {'/'.join(SUFFIXES)} documents with text under {path}")


def passages(doc: Document) -> Iterator[tuple[str, str]]:
    """Yield (section, text) chunks of at most about MAX_PASSAGE_CHARS."""
    for section in doc.sections:
        chunk: list[str] = []
        size = 0
        for para in (p.strip() for p in section.text.split("\n")):
            if not para:
                continue
            if chunk and size + len(para) > MAX_PASSAGE_CHARS:
                yield section.heading, "\n".join(chunk)
                chunk, size = [], 0
            chunk.append(para)
            size += len(para)
        if chunk:
            yield section.heading, "\n".join(chunk)


def _read(file: Path, doc_id: str, urls: dict[str, str]) -> Document | None:
    suffix = file.suffix.lower()
    raw = file.read_text(encoding="utf-8", errors="replace")
    if suffix == ".json":
        return _from_freshwiki_json(file, doc_id, raw)
    if suffix in (".html", ".htm"):
        raw = _html_to_markdown(raw)
    lines = raw.strip().splitlines()
    title = file.stem.replace("_", " ")
    if lines and suffix == ".txt" and not _HEADING.match(lines[0]) and lines[0].strip():
        title = lines.pop(0).strip().replace("_", " ")
    elif lines and (m := _HEADING.match(lines[0])) and len(m.group(1)) == 1:
        title = m.group(2)
        lines.pop(0)
    return Document(
        doc_id=doc_id,
        title=title,
        url=urls.get(title) or file.resolve().as_uri(),
        sections=tuple(_sections(lines)),
    )


def _sections(lines: list[str]) -> Iterator[Section]:
    path: list[str] = ["Summary"]
    body: list[str] = []
    levels: list[int] = [0]

    def flush() -> Iterator[Section]:
        text = _REFERENCE_MARK.sub("", "\n".join(body)).strip()
        if text and path[-1].casefold() not in _SKIPPED_SECTIONS:
            yield Section(" > ".join(path), text)

    for line in lines:
        m = _HEADING.match(line)
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


def _from_freshwiki_json(file: Path, doc_id: str, raw: str) -> Document | None:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as err:
        raise CorpusError(f"{file}: not valid JSON ({err})") from err
    if not isinstance(data, dict) or "content" not in data:
        return None
    sections = []
    if summary := str(data.get("summary") or "").strip():
        sections.append(Section("Summary", _REFERENCE_MARK.sub("", summary)))
    for part in data.get("content") or []:
        heading = str(part.get("section_title") or "").strip() or "Summary"
        if heading.casefold() in _SKIPPED_SECTIONS:
            continue
        text = " ".join(
            str(s.get("sentence", "")) for s in part.get("section_content") or []
        )
        if text := _REFERENCE_MARK.sub("", text).strip():
            sections.append(Section(heading, text))
    title = str(data.get("title") or file.stem).replace("_", " ")
    url = data.get("url")
    return Document(doc_id, title, str(url) if url else None, tuple(sections))


def _topic_list_urls(folder: Path) -> dict[str, str]:
    """FreshWiki's `topic_list.csv` (topic, url) gives the URLs of .txt articles."""
    listing = folder / "topic_list.csv"
    if not listing.is_file():
        return {}
    with listing.open(encoding="utf-8", newline="") as fh:
        return {
            row["topic"]: row["url"] for row in csv.DictReader(fh) if row.get("url")
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
    parser.feed(raw)
    text = html.unescape("".join(parser.out))
    return "\n".join(line.strip() for line in text.splitlines())
