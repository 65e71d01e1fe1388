"""``open_dump``'s inputs (issue 28, item 6): no byte of a file in an error, and ``dump_roots``
limiting which directories it may open (real paths, component by component, no symlink escape)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kdmcp.config import load_config
from kdmcp.dump_header import dump_kind
from kdmcp.dump_roots import inside_roots
from kdmcp.engine.launch import Target
from kdmcp.errors import InvalidArgument, PolicyDenied
from kdmcp.server.call import Call
from kdmcp.server.tools.sessions.targets import open_dump
from tests.server.helpers import make_app


class Started(Exception):
    """Raised by the stubbed start: the path got past every check."""


def _opened(tmp_path: Path, path: Path, **config: Any) -> Target:
    """What ``open_dump`` would start the debugger on (its checks run for real, the start is stubbed)."""
    app = make_app(**config)

    def start(target: Target, **_: Any) -> None:
        raise Started(target)

    app.start_session = start  # type: ignore[method-assign]
    with pytest.raises(Started) as started:
        open_dump(Call(app, None), str(path))
    target: Target = started.value.args[0]
    return target


def _dump(path: Path, head: bytes = b"MDMP\x93\xa7\x00\x00") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(head + bytes(64))
    return path


def test_a_file_that_is_not_a_dump_is_refused_without_a_byte_of_it(tmp_path: Path) -> None:
    secret = tmp_path / "credentials"
    secret.write_bytes(b"AKIAQ7CAEXAMPLEKEY\n")
    with pytest.raises(InvalidArgument) as refused:
        dump_kind(str(secret))
    message = refused.value.message
    assert message.startswith("path: not a crash dump (unknown header")
    assert "AKIA" not in message and "Q7CA" not in message and "b'" not in message


def test_without_dump_roots_any_readable_dump_opens(tmp_path: Path) -> None:
    dump = _dump(tmp_path / "anywhere" / "a.dmp")
    assert _opened(tmp_path, dump).path == str(dump)  # type: ignore[union-attr]


def test_dump_roots_let_in_only_what_lies_under_them(tmp_path: Path) -> None:
    roots = [str(tmp_path / "dumps"), str(tmp_path / "more")]
    inside = _dump(tmp_path / "dumps" / "sub" / "a.dmp")
    assert _opened(tmp_path, inside, dump_roots=roots).path == str(inside)  # type: ignore[union-attr]
    for outside in (_dump(tmp_path / "dumpsx" / "a.dmp"),  # a sibling whose name starts like a root
                    _dump(tmp_path / "elsewhere.dmp"),
                    tmp_path / "dumps" / ".." / "elsewhere.dmp",  # `..` out of a root
                    tmp_path / "absent" / "no.dmp"):  # nothing outside is probed: not "no such file"
        with pytest.raises(PolicyDenied) as refused:
            _opened(tmp_path, outside, dump_roots=roots)
        assert refused.value.message == ("path: outside the directories dumps may be opened from "
                                         "(dump_roots in the config)")


def test_a_symlink_out_of_a_root_is_outside_and_the_real_path_is_what_opens(tmp_path: Path) -> None:
    roots = [str(tmp_path / "dumps")]
    target = _dump(tmp_path / "private" / "a.dmp")
    (tmp_path / "dumps").mkdir()
    (tmp_path / "dumps" / "link.dmp").symlink_to(target)
    (tmp_path / "dumps" / "dir").symlink_to(tmp_path / "private", target_is_directory=True)
    for escape in (tmp_path / "dumps" / "link.dmp", tmp_path / "dumps" / "dir" / "a.dmp"):
        with pytest.raises(PolicyDenied):
            _opened(tmp_path, escape, dump_roots=roots)
    # A link that stays inside opens, as the file it names: the debugger gets the checked real path.
    real = _dump(tmp_path / "dumps" / "real.dmp")
    (tmp_path / "dumps" / "alias.dmp").symlink_to(real)
    assert _opened(tmp_path, tmp_path / "dumps" / "alias.dmp", dump_roots=roots).path == str(real)  # type: ignore[union-attr]
    # A root that is itself a link is its real directory.
    (tmp_path / "linked-root").symlink_to(tmp_path / "dumps", target_is_directory=True)
    assert inside_roots(str(real), [str(tmp_path / "linked-root")]) == str(real)


def test_dump_roots_in_a_config_file_are_anchored_to_its_directory(tmp_path: Path) -> None:
    config = tmp_path / "kdmcp.yaml"
    config.write_text("dump_roots: [dumps, /abs/dumps]\nallow_attach: true\nask: false\n")
    loaded = load_config(str(config), env={}).config
    assert loaded.dump_roots == [str(tmp_path / "dumps"), "/abs/dumps"]
    assert (loaded.allow_attach, loaded.allow_local_kernel, loaded.ask) == (True, False, False)
    config.write_text('dump_roots: ["C:\\\\x\\"y"]\n')
    with pytest.raises(Exception, match="dump_roots"):
        load_config(str(config), env={})
