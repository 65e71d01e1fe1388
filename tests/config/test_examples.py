"""The example files load through the real loaders and document every key they set."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from kdmcp.config import Config, DebuggerPaths, KdnetConnection, Timeouts, load_config
from kdmcp.statefile import SCHEMA, load_state

ROOT = Path(__file__).resolve().parents[2]
CONFIG_EXAMPLE = ROOT / "config" / "kdmcp.example.yaml"
STATE_EXAMPLE = ROOT / "config" / "state.example.yaml"
# A YAML mapping key at the start of a line (after indentation).
_KEY_LINE = re.compile(r"^\s*[A-Za-z_][\w.-]*\s*:")


def test_config_example_loads_and_matches_the_defaults() -> None:
    loaded = load_config(str(CONFIG_EXAMPLE), env={})
    config = loaded.config
    assert loaded.path == CONFIG_EXAMPLE
    # The example shows the defaults, except where its comments say "example value".
    defaults = Config()
    assert config.timeouts == defaults.timeouts
    assert (config.inline_output_bytes, config.max_sessions) == (defaults.inline_output_bytes, defaults.max_sessions)
    assert config.state_file_max_age_hours == defaults.state_file_max_age_hours
    assert config.console_backend == defaults.console_backend
    assert config.debuggers == defaults.debuggers
    assert config.symbol_path is not None
    assert set(config.connections) == {"lab-vm"}
    assert config.connections["lab-vm"].key.reveal() == "1.2.3.4"


def test_state_example_loads() -> None:
    loaded = load_state(str(STATE_EXAMPLE), env={}, max_age_s=None)
    state = loaded.state
    assert state.schema_name == SCHEMA
    assert (state.port, state.key.reveal()) == (50000, "1.2.3.4")
    assert state.created_by is not None
    assert state.created_at_unix is not None
    # Only the permission warning can apply (depends on the checkout's umask).
    assert all("readable by other users" in w for w in loaded.warnings)


def test_state_example_sets_every_field() -> None:
    document = yaml.safe_load(STATE_EXAMPLE.read_text())
    assert set(document) == {"schema", "guest_host", "host_ip", "port", "key", "created_by", "created_at_unix"}


def test_config_example_sets_every_setting() -> None:
    document = yaml.safe_load(CONFIG_EXAMPLE.read_text())
    assert set(document) == set(Config.model_fields)
    assert set(document["timeouts"]) == set(Timeouts.model_fields)
    assert set(document["debuggers"]) == set(DebuggerPaths.model_fields)
    assert set(document["connections"]["lab-vm"]) == set(KdnetConnection.model_fields)


@pytest.mark.parametrize("path", [CONFIG_EXAMPLE, STATE_EXAMPLE], ids=lambda p: p.name)
def test_every_key_has_a_comment(path: Path) -> None:
    undocumented = [line for line in path.read_text().splitlines() if _KEY_LINE.match(line) and "#" not in line]
    assert undocumented == []
