"""The knowledge base on the shipped FreshWiki corpus: `python -m benchmarks.kb_run`.

Times the ingest of the corpus into a new file, then 1,000 searches (k=5)
whose queries are words of the article titles. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import tempfile
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from benchmarks.common import answer, peak_mib
from runtime.kb import DEFAULT_CORPUS, KnowledgeBase, ingest
from runtime.text import terms


def queries(kb: Path, count: int, seed: int = 7) -> list[str]:
    """`count` queries of one to three words drawn from the article titles."""
    with closing(sqlite3.connect(kb)) as db:
        titles = [row[0] for row in db.execute("SELECT title FROM documents")]
    words = sorted({w for title in titles for w in terms(title)})
    pick = random.Random(seed)
    return [" ".join(pick.sample(words, pick.randint(1, 3))) for _ in range(count)]


def percentile(values: list[float], share: float) -> float:
    """The `share` percentile of `values` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def measure(count: int) -> dict[str, Any]:
    """Ingest the corpus, then time `count` searches."""
    with tempfile.TemporaryDirectory(prefix="delegator-bench-kb-") as tmp:
        path = Path(tmp) / "kb.sqlite"
        started = time.perf_counter()
        result = ingest(path, [DEFAULT_CORPUS])
        ingest_s = time.perf_counter() - started
        size_mib = path.stat().st_size / 2**20
        asked = queries(path, count)
        kb = KnowledgeBase(path)
        latencies, hits = [], 0
        for query in asked:
            started = time.perf_counter()
            hits += len(kb.search(query, 5))
            latencies.append((time.perf_counter() - started) * 1000)
    return {
        "documents": result.documents,
        "passages": result.passages,
        "ingest_s": round(ingest_s, 3),
        "index_mib": round(size_mib, 2),
        "queries": len(asked),
        "hits_per_query": round(hits / len(asked), 2),
        "search_p50_ms": round(statistics.median(latencies), 3),
        "search_p95_ms": round(percentile(latencies, 0.95), 3),
        "peak_mib": peak_mib(),
    }


def main() -> None:
    """Parse the arguments, measure, print the JSON line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=1000)
    answer(measure(parser.parse_args().queries))


if __name__ == "__main__":
    main()
