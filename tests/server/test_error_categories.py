"""The error categories are one closed, documented set: the instructions, README and docs/clients.md
are built from (or held equal to) ``kdmcp.errors.ERROR_CATEGORIES``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

from kdmcp import errors
from kdmcp.errors import ERROR_CATEGORIES, category_list
from kdmcp.server import models
from kdmcp.server.mcp_server import INSTRUCTIONS

ROOT = Path(__file__).resolve().parents[2]


def _subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub, *_subclasses(sub)}
    return found


def _words(text: str) -> str:
    return " ".join(text.split())


def test_every_error_class_has_a_listed_category_and_every_category_a_next_step():
    categories = {cls.category for cls in _subclasses(errors.KdMcpError)} | {errors.KdMcpError.category}
    assert categories == set(ERROR_CATEGORIES)
    # The served errors carry the one type: their schema's enum is the list, in its order.
    assert get_args(models.ErrorResult.model_fields["category"].annotation) == ERROR_CATEGORIES
    assert list(errors.NEXT_STEP) == list(ERROR_CATEGORIES)  # complete, and in the one order
    # Clauses of one sentence: a full stop would end the README's sentence early.
    assert not [step for step in errors.NEXT_STEP.values() if "." in step or not step]


def test_the_instructions_list_every_category_from_the_source():
    assert f"Categories: {category_list()}." in _words(INSTRUCTIONS)
    assert "error[category]: message" in INSTRUCTIONS


def test_the_readme_sentence_is_the_generated_list():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    sentence = ("Error categories (an error's first text block reads `error[category]: message`, see "
                f"[docs/clients.md](docs/clients.md)): {category_list(markdown=True)}.")
    assert sentence in _words(readme)
    assert len(re.findall(r"Error categories", readme)) == 1


def test_docs_clients_table_is_the_source():
    doc = (ROOT / "docs" / "clients.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([a-z_]+)` \| (.*) \|$", doc, re.MULTILINE)
    assert rows == list(errors.NEXT_STEP.items())
