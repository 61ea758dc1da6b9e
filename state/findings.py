"""What a subagent brings back: findings and the sources they cite."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field

MIN_QUOTE_WORDS = 5
"""The fewest words a quote may have: fewer say nothing checkable."""


def long_enough_to_quote(text: str) -> bool:
    """Whether `text` has the MIN_QUOTE_WORDS words a quote needs."""
    return len(text.split()) >= MIN_QUOTE_WORDS


class Source(BaseModel):
    """One passage of the knowledge base that a finding cites."""

    model_config = ConfigDict(frozen=True)

    doc_id: str = Field(description="Stable id of the document in the knowledge base.")
    passage_id: str = Field(description="Id of the cited passage, '<doc_id>#<n>'.")
    title: str = Field(description="Document title.")
    url: str | None = Field(default=None, description="Where the document lives.")
    section: str = Field(description="Heading path of the passage inside the doc.")
    retrieved_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


class Finding(BaseModel):
    """A claim backed by a verbatim quote from one source passage."""

    model_config = ConfigDict(frozen=True)

    claim: str = Field(min_length=1, description="What the finding asserts.")
    quote: str = Field(min_length=1, description="Verbatim text from the passage.")
    source: Source
    facet_ids: tuple[str, ...] = Field(description="Facets the finding answers.")
    values: tuple[str, ...] = Field(
        description="Dimension values the finding covers (within its facets' values)."
    )
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    verified: bool | None = Field(
        default=None, description="None until `verify` checked the quote."
    )

    @property
    def span_key(self) -> tuple[str, str, str]:
        """Identity of a finding: its cited span and its claim, to dedupe findings.

        Two claims on one span stay apart, so that one that fails verification
        cannot take the other down with it.
        """
        return (
            self.source.passage_id,
            normalize_text(self.quote),
            normalize_text(self.claim),
        )


def normalize_text(text: str) -> str:
    """Fold case and whitespace, the normal form quotes are compared in."""
    return " ".join(text.split()).casefold()
