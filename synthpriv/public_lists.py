"""Named public code lists a categorical column can take its categories from
(``categories: {list: us_state_code}`` in a schema), and the header names that suggest one.

Every list is public knowledge, read from a maintained package (``pycountry``: ISO 3166-1
countries, ISO 3166-2:US subdivisions, ISO 4217 currencies, ISO 639 languages) or fixed here
(weekday and month names, in English); none is read from a table, so a column over one costs no
budget for its domain. To add a list: add an entry to ``LISTS`` (a name that says the standard and
the variant, a one-line description, a function returning the values) and a count test.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache


def _pycountry():  # noqa: ANN202 - the module
    try:
        import pycountry
    except ImportError:
        raise ImportError(
            "the ISO public lists (countries, US states, currencies, languages) come from the "
            "package pycountry, which is not installed: pip install 'pycountry>=26.2.16'"
        ) from None
    return pycountry


def _us() -> list:
    return list(_pycountry().subdivisions.get(country_code="US"))


def _languages_639_1() -> list:
    return [language for language in _pycountry().languages if hasattr(language, "alpha_2")]


_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")  # fixed here: the machine's locale cannot change them


@dataclass(frozen=True)
class PublicList:
    """A named list: what it holds (``description``) and a function giving its values."""

    name: str
    description: str
    values: Callable[[], list[str]]


_DEFINED = (
    PublicList("us_state_code", "US postal codes of the ISO 3166-2:US subdivisions: the 50 states, "
               "DC and the outlying areas (AS, GU, MP, PR, UM, VI)",
               lambda: [s.code.removeprefix("US-") for s in _us()]),
    PublicList("us_state_name", "names of the same ISO 3166-2:US subdivisions ('California', "
               "'District of Columbia', 'Puerto Rico')", lambda: [s.name for s in _us()]),
    PublicList("iso_country_alpha2", "ISO 3166-1 alpha-2 country codes ('DE', 'US')",
               lambda: [c.alpha_2 for c in _pycountry().countries]),
    PublicList("iso_country_alpha3", "ISO 3166-1 alpha-3 country codes ('DEU', 'USA')",
               lambda: [c.alpha_3 for c in _pycountry().countries]),
    PublicList("iso_country_name", "ISO 3166-1 short names ('Germany', 'Bolivia, Plurinational "
               "State of')", lambda: [c.name for c in _pycountry().countries]),
    PublicList("iso_country_common_name", "ISO 3166-1 countries by their common name where "
               "pycountry gives one ('Bolivia', 'Taiwan'), else the short name",
               lambda: [getattr(c, "common_name", c.name) for c in _pycountry().countries]),
    PublicList("iso_currency_code", "ISO 4217 currency codes ('EUR', 'USD')",
               lambda: [c.alpha_3 for c in _pycountry().currencies]),
    PublicList("iso_currency_name", "ISO 4217 currency names ('Euro', 'US Dollar')",
               lambda: [c.name for c in _pycountry().currencies]),
    PublicList("iso_language_alpha2", "ISO 639-1 two-letter language codes ('en', 'de')",
               lambda: [language.alpha_2 for language in _languages_639_1()]),
    PublicList("iso_language_name", "English names of the ISO 639-1 languages ('English', "
               "'German')", lambda: [language.name for language in _languages_639_1()]),
    PublicList("iso_language_alpha3", "ISO 639-3 three-letter language codes (about 7,900: "
               "every living and extinct language catalogued)",
               lambda: [language.alpha_3 for language in _pycountry().languages]),
    # weekday and month lists keep calendar order; the ISO lists above are sorted (_values)
    PublicList("weekday_name", "English weekday names, Monday to Sunday", lambda: list(_DAYS)),
    PublicList("weekday_abbrev", "English weekday abbreviations, Mon to Sun",
               lambda: [day[:3] for day in _DAYS]),
    PublicList("month_name", "English month names, January to December", lambda: list(_MONTHS)),
    PublicList("month_abbrev", "English month abbreviations, Jan to Dec",
               lambda: [month[:3] for month in _MONTHS]),
)
LISTS: dict[str, PublicList] = {entry.name: entry for entry in _DEFINED}
_CALENDAR = ("weekday_name", "weekday_abbrev", "month_name", "month_abbrev")


@cache
def _values(name: str) -> tuple[str, ...]:
    values = list(dict.fromkeys(LISTS[name].values()))  # once each (two currencies share a name)
    return tuple(values if name in _CALENDAR else sorted(values))


def list_values(name: str) -> list[str]:
    """The values of public list ``name`` (each once; ISO lists sorted, weekdays and months in
    calendar order). KeyError with the known names for an unknown name."""
    if name not in LISTS:
        raise KeyError(f"no public list named '{name}'; known lists: {', '.join(LISTS)}")
    return list(_values(name))


@cache
def value_set(name: str) -> frozenset[str]:
    """The values of list ``name`` as a set (membership tests); empty when its package is not
    installed (the drafts' suggestions skip such a list; a schema naming it gets the ImportError)."""
    try:
        return frozenset(list_values(name))
    except ImportError:
        return frozenset()


MIN_LIST_VALUES = 3  # a column whose name suggests no list is matched to one from 3 values seen
# Header names (lower case, letters and digits only) that suggest a list: public, since the
# schema names the columns. A suggestion, never a decision: the cells may be written otherwise.
_PLACE = r"(country|nation|countryofbirth|birthcountry|nativecountry|countryofresidence)"
_SUGGESTED = (  # the first pattern the whole name matches wins
    (r"(us)?statename", ("us_state_name", "us_state_code")),
    (r"(us)?states?(code|abbr|abbreviation|postalcode)?|stateprovince",
     ("us_state_code", "us_state_name")),
    (_PLACE + "name", ("iso_country_name", "iso_country_common_name")),
    (_PLACE + "(code|iso)?", ("iso_country_alpha2", "iso_country_alpha3", "iso_country_name")),
    (r"(currency|ccy)name", ("iso_currency_name", "iso_currency_code")),
    (r"(currency|ccy|curr)(code|iso)?", ("iso_currency_code", "iso_currency_name")),
    (r"(language|lang)name", ("iso_language_name", "iso_language_alpha2")),
    (r"(language|lang)(code|iso)?", ("iso_language_alpha2", "iso_language_name")),
    (r"weekdayname|dayofweekname|dayname", ("weekday_name", "weekday_abbrev")),  # weekday: often 0-6
    (r"monthname|monthofyearname", ("month_name", "month_abbrev")),  # month: often 1-12
)


def list_holding(values: set[str], column_name: str) -> str | None:
    """The public list that holds every one of ``values`` (values seen in a column: data, so
    for the data-read draft only): a list the column's name suggests first, else the smallest
    list once ``MIN_LIST_VALUES`` values are seen (fewer match lists by chance: 'M', 'F');
    None if no list holds them all."""
    named = suggested_lists(column_name)
    if not values or not named and len(values) < MIN_LIST_VALUES:
        return None
    holding = [listed for listed in (*named, *sorted(LISTS, key=lambda n: len(value_set(n))))
               if value_set(listed) and values <= value_set(listed)]
    return holding[0] if holding else None


def suggested_lists(column_name: str) -> tuple[str, ...]:
    """The public lists whose values a column named ``column_name`` often holds (most likely
    first), from the name alone; () when the name suggests none. Reads no data."""
    key = re.sub(r"[^a-z0-9]", "", column_name.lower())
    for pattern, names in _SUGGESTED:
        if re.fullmatch(pattern, key):
            return names
    return ()
