"""What counts as a question the graph can research."""

from __future__ import annotations

import re

MAX_QUESTION_CHARS = 4000


class QuestionError(ValueError):
    """A question that cannot be researched as given."""


def check_question(question: object) -> str:
    """The question with its whitespace folded; unusable questions are refused."""
    if not isinstance(question, str) or not question.strip():
        raise QuestionError("the question is empty")
    question = " ".join(question.split())
    if len(question) > MAX_QUESTION_CHARS:
        raise QuestionError(
            f"the question has {len(question)} characters; the limit is "
            f"{MAX_QUESTION_CHARS}. Ask something shorter, or split it."
        )
    if not re.search(r"[^\W_]{2}", question):
        raise QuestionError("the question has no searchable words")
    return question
