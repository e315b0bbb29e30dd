"""The plugin API range a plugin declares in its entry point, read from the installed metadata so that svc can
refuse a plugin written for another API without importing it (none of its import-time code runs).

The range sits in the entry point's "extras" brackets. Packaging tools accept only PEP 508 identifiers there, and
only after a ``:attr`` (setuptools validates ``pyproject.toml`` so), so the form that every backend writes names
the range as identifiers: ``site = "svc_site:hooks [svc-api-1.2]"`` means ``>=1.2,<2`` (this minor version or a
later one of the same major: minor versions only add). Several identifiers are alternatives
(``[svc-api-1.2, svc-api-2.0]``: 1.2 or later of 1, or any 2). The older form, a PEP 440 range in the brackets
(``svc_site.hooks [>=1.0,<2]``), is still read: setuptools' ``setup.py``/``setup.cfg``, hatchling and flit write
it, only setuptools' ``pyproject.toml`` refuses it. Pure logic: no import, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

API_EXTRA_PREFIX = "svc-api"
"""Extras beginning so are svc's; any other extra in the brackets is someone else's and ignored."""

_API_EXTRA = re.compile(r"svc-api-(?P<major>\d+)(?:\.(?P<minor>\d+))?", re.IGNORECASE)
_RANGE_OPERATORS = frozenset("<>=!~")


@dataclass(frozen=True)
class ApiRange:
    """What an entry point declares: ``declared`` as written, ``meaning`` the same as PEP 440 ranges, ``ranges``
    those ranges (any one admitting a version admits it)."""

    declared: str
    meaning: str
    ranges: tuple[SpecifierSet, ...]

    def admits(self, api_version: str) -> bool:
        """Whether a plugin with this range runs on plugin API ``api_version``."""
        version = Version(api_version)
        return any(version in supported for supported in self.ranges)

    def describe(self) -> str:
        """The range in words for a refusal: the PEP 440 form, and the identifiers when they were written."""
        return self.meaning if self.meaning == self.declared else f"{self.meaning} ({self.declared})"


def entry_point_range(value: str) -> ApiRange | None:
    """The API range in an entry point's value (``module[:attr] [extras]``), or None when it declares none.

    Raises ValueError, with what to write instead, for a range that cannot be read (``[svc-api-one]``, ``[>=x]``).
    """
    _, bracket, rest = value.partition("[")
    inside = rest.strip().removesuffix("]").strip() if bracket else ""
    if not inside:
        return None
    if _RANGE_OPERATORS.intersection(inside):
        try:
            return ApiRange(declared=inside, meaning=inside, ranges=(SpecifierSet(inside),))
        except InvalidSpecifier:
            raise ValueError(f"{inside!r} is not a version range (write e.g. [svc-api-1.2])") from None
    declared: list[str] = []
    meanings: list[str] = []
    for extra in (part.strip() for part in inside.split(",")):
        if not extra.lower().startswith(API_EXTRA_PREFIX):
            continue
        match = _API_EXTRA.fullmatch(extra)
        if match is None:
            raise ValueError(f"{extra!r} is not a plugin API version (write e.g. svc-api-1.2 for >=1.2,<2)")
        major = int(match["major"])
        minor = int(match["minor"] or 0)
        declared.append(extra)
        meanings.append(f">={major}.{minor},<{major + 1}")
    if not declared:
        return None
    ranges = tuple(SpecifierSet(meaning) for meaning in meanings)
    return ApiRange(declared=", ".join(declared), meaning=" or ".join(meanings), ranges=ranges)
