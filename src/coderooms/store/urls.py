"""Store URLs as they may be shown: with any password taken out."""

from __future__ import annotations

import re

__all__ = ["looks_like_conninfo", "redacted_url"]

_CONNINFO = re.compile(
    r"^\s*(?:host|hostaddr|port|dbname|user|password|service|sslmode|options)\s*=",
    re.IGNORECASE,
)


def redacted_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for messages and banners)."""
    url = re.sub(r"(://[^/@:]*):[^/@]*@", r"\1:***@", url)
    return re.sub(r"(?i)(password\s*=\s*)[^&\s]*", r"\1***", url)


def looks_like_conninfo(value: str) -> bool:
    """Whether ``value`` is a libpq ``key=value`` connection string (``host=db
    dbname=rooms``): a PostgreSQL database, not the name of a SQLite file."""
    return _CONNINFO.match(value) is not None
