"""The error categories are one closed, documented set."""

from __future__ import annotations

from pathlib import Path

from kdmcp import errors
from kdmcp.server.models import ERROR_CATEGORIES


def _subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub, *_subclasses(sub)}
    return found


def test_every_error_class_has_a_listed_category_and_the_readme_names_them_all():
    categories = {cls.category for cls in _subclasses(errors.KdMcpError)} | {errors.KdMcpError.category}
    assert categories == set(ERROR_CATEGORIES)
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    for category in ERROR_CATEGORIES:
        assert f"`{category}`" in readme, category
