"""Text from endpoints, file names and the knowledge base stays inert everywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.main import main
from roles.render import inert
from runtime.reliability import describe

HOSTILE = (
    "<img src=x onerror=alert(1)> [pwn](javascript:alert(1)) \x1b[31mred\x1b[0m "
    "see www.evil.example and https://evil.example/x :x:"
)


def test_markdown_gets_no_tag_link_or_autolink() -> None:
    text = inert(HOSTILE)
    assert "<img" not in text
    assert text.count("](") == text.count("\\](")  # every link bracket escaped
    assert "\x1b" not in text
    assert "www.evil" not in text and "https://evil" not in text
    assert "evil.example" in text  # still shown, as text


def test_an_error_line_has_no_escape_sequence_markup_or_emoji(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "\x1b" not in describe(RuntimeError(HOSTILE))
    missing = tmp_path / "\x1b[2J:x:[bold]kb.sqlite"
    assert main(["research", "floods", "--kb", str(missing), "--quiet"]) == 4
    err = capsys.readouterr().err
    assert "\x1b" not in err and ":x:" in err and "[bold]" in err
    assert err.count("\n") == 1


def test_file_names_in_the_skip_list_print_inert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\n\nA good document about rivers.\n")
    (folder / "bad\x1b[2J\nname.md").write_bytes(b"\0\0binary")
    assert main(["ingest", str(folder), "--kb", str(tmp_path / "kb.sqlite")]) == 0
    err = capsys.readouterr().err
    assert "\x1b" not in err and "bad[2J\\nname.md" in err
