"""What counts as a question the graph can research."""

from __future__ import annotations

import re

MAX_QUESTION_CHARS = 4000


class QuestionError(ValueError):
    """A question that cannot be researched as given."""


_UNDECODABLE = re.compile("[\udc80-\udcff]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def check_question(question: object) -> str:
    """The question with control characters dropped and whitespace folded.

    An empty, oversized or undecodable question is refused.
    """
    if not isinstance(question, str) or not question.strip():
        raise QuestionError("the question is empty")
    if _UNDECODABLE.search(question):
        raise QuestionError("the question is not valid UTF-8 text")
    question = " ".join(_CONTROL.sub(" ", question).split())
    if not question:
        raise QuestionError("the question is empty")
    if len(question) > MAX_QUESTION_CHARS:
        raise QuestionError(
            f"the question has {len(question)} characters; the limit is "
            f"{MAX_QUESTION_CHARS}. Ask something shorter, or split it."
        )
    if not re.search(r"[^\W_]{2}", question):
        raise QuestionError("the question has no searchable words")
    return question
