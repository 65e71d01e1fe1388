"""Engine tests.

``DEFAULT_BACKEND_ONLY`` runs a process-tier test on the platform's default console backend
(``auto``) instead of on every backend (the ``backend`` fixture, tests/conftest.py): for tests of
what a session does with a state, which test_machine.py proves byte by byte. Tests of I/O —
reading, echo, Ctrl+C delivery, kill, death mid-output, the 100 MB store — keep every backend.
"""

import pytest

DEFAULT_BACKEND_ONLY = pytest.mark.parametrize("backend", ["auto"])
