"""Runs last: no canary key or token in any byte kd-mcp emitted during the whole suite.

Two nets: every test's captured stdout, stderr and log output (collected by the conftest
hook), and every file kd-mcp wrote under the suite's temporary directory — the byte-exact
stdout/stderr of server subprocesses (tee ``*.bin``), transcripts, session logs and casts
(``sweep_for_canaries`` in tests/conftest.py says what is left out, and why).

Under pytest-xdist this test, on one worker, sees that worker's share only and need not run
last; it still checks that share, and the controller sweeps every worker's at session end
(``pytest_sessionfinish`` in tests/conftest.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CAPTURED_LEAKS, is_xdist_worker, sweep_for_canaries


def test_no_canary_in_anything_emitted(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    assert CAPTURED_LEAKS == []
    swept, leaks = sweep_for_canaries(Path(tmp_path_factory.getbasetemp()))
    assert leaks == []
    if is_xdist_worker(request.config):
        return  # whether the whole suite left files to sweep is the controller's to say
    # When the whole suite ran, the sweep had server output to look at.
    if len(CAPTURED_LEAKS) == 0 and swept == 0:
        pytest.skip("no kd-mcp output files in this run (run the whole suite)")
