"""A pydantic ``ValidationError`` as ``location: problem`` lines: the one rendering every reader uses.

The config file, the state file, the listener's token file, scenario files and tool arguments
all report a refused value the same way. Input values are never quoted (a state file's
``key`` is a secret, and a refused token must not be echoed back).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = ["LazyModel", "place", "validation_problems"]


class LazyModel(BaseModel):
    """A pydantic model whose validator, serializer and schema are built when first used, not when
    its class is defined (``defer_build``).

    kd-mcp defines some two hundred models (results, records, config); building every one at import
    was most of the server's own start-up, before the first ``tools/list`` (docs/performance.md,
    "Cold start"), though a session uses a few. Validation and output are the same either way.
    """

    model_config = ConfigDict(defer_build=True)

Location = tuple[int | str, ...]
_BRANCH = re.compile(r"(?:constrained-)?(?:int|str|float|bool|bytes|list\[.*\]|dict\[.*\])$|function-[a-z]+\[")


def place(loc: Sequence[int | str]) -> Location:
    """An error's location without a union's branch, which is pydantic's tag ("constrained-str",
    "function-after[…]"), not a place in the input."""
    return tuple(part for part in loc if not (isinstance(part, str) and _BRANCH.match(part)))


def validation_problems(
    exc: ValidationError,
    *,
    top: str = "(top level)",
    allowed_keys: Callable[[Location], Sequence[str]] | None = None,
) -> list[str]:
    """``dotted.location: problem`` per error, in pydantic's order.

    ``top`` names the whole document when an error has no location; ``allowed_keys`` lists
    the keys allowed at a location, so an unknown key says what was expected.
    """
    out: list[str] = []
    for err in exc.errors(include_url=False, include_context=False, include_input=False):
        loc = place(err["loc"])
        where = ".".join(str(part) for part in loc if part != "[key]") or top
        kind = err["type"]
        if kind == "missing":
            problem = "is required"
        elif kind == "extra_forbidden":
            allowed = list(allowed_keys(loc[:-1])) if allowed_keys is not None else []
            problem = "is not a known key" + (f" (expected one of: {', '.join(allowed)})" if allowed else "")
        elif loc and loc[-1] == "[key]":
            problem = "is not a valid name (names must be strings)"
        else:
            problem = err["msg"].removeprefix("Value error, ")
        out.append(f"{where}: {problem}")
    return out
