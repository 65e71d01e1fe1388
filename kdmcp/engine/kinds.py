"""What kind of target a session debugs, and what each kind allows: one table.

Every rule that differs by target lives in :data:`KINDS`: whether the target can run (so
``g``, stepping and ``break_in`` make sense), whether it is a kernel, whether a WinRM
companion can be waiting on it, and how the debugger is to leave it. The server's per-kind
refusals (``invalid_argument`` with the reason) and ``stop_kd``'s actions read this table;
docs/targets.md is test-checked against it.

How each kind is left, from the debugger's documentation of its quit commands:

- ``q`` "ends the debugging session. In user-mode debugging, the target application is
  terminated"; on a dump it only closes the dump file; ``kd -kl`` has nothing to end.
- ``qd`` "ends the debugging session and detaches from the target application, leaving it
  running" (an attached process must go on as it was before we came).
- A noninvasive attach (``cdb -pv``) never suspended more than the debugger's own view: ``q``
  "leaves the target running" (noninvasive debugging, "Ending the session").
- ``.remote_exit`` "exits the debugging client but leaves the debugging server running": a
  client that sent ``q`` would end the *server's* session and its target with it.
- A KDNET guest left at a break is frozen, so it is resumed (``g``) and kd is quit with
  Ctrl+B then Enter, which kd reads even while the target runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["KINDS", "NONINVASIVE_QUIT", "KindRules", "SessionKind", "kind_rows"]

SessionKind = Literal["kdnet", "kernel_dump", "user_dump", "process", "launched", "local_kernel", "remote"]


@dataclass(frozen=True)
class KindRules:
    """What a kind of target allows, and how a session of it ends."""

    title: str  # how results and errors name the target
    debugger: str  # which debugger runs it, as the docs say
    kernel: bool
    runs: bool  # the target can run: g and the go family, break_in (a step on a dump is the debugger's own error)
    quit_command: str  # typed at a prompt to leave ("" : Ctrl+B Enter instead)
    quit_says: str  # what stop_kd reports it did by quitting
    break_before_quit: bool = False  # a running target is broken into first (the quit needs a prompt)
    resume_before_quit: bool = False  # a broken-in target is resumed first (a frozen guest)


KINDS: dict[SessionKind, KindRules] = {
    "kdnet": KindRules("a KDNET guest", debugger="kd", kernel=True, runs=True, quit_command="",
                       quit_says="quit kd, the guest left running", resume_before_quit=True),
    "kernel_dump": KindRules("a kernel crash dump", debugger="kd", kernel=True, runs=False, quit_command="q",
                             quit_says="closed the dump"),
    "user_dump": KindRules("a user-mode dump", debugger="cdb", kernel=False, runs=False, quit_command="q",
                           quit_says="closed the dump"),
    "process": KindRules("an attached process", debugger="cdb", kernel=False, runs=True, quit_command="qd",
                         quit_says="detached: the process runs on", break_before_quit=True),
    "launched": KindRules("a launched process", debugger="cdb", kernel=False, runs=True, quit_command="q",
                          quit_says="terminated the launched process"),
    "local_kernel": KindRules("the local kernel (kd -kl)", debugger="kd", kernel=True, runs=False, quit_command="q",
                              quit_says="ended local kernel debugging"),
    "remote": KindRules("a debugging server's session", debugger="kd or cdb", kernel=True, runs=True,
                        quit_command=".remote_exit",
                        quit_says="left the server's session, which goes on"),
}

# What a noninvasive attach (cdb -pv) quits with: q leaves the process running (see above).
NONINVASIVE_QUIT = ("q", "detached (noninvasive): the process runs on")


def kind_rows() -> list[tuple[str, ...]]:
    """One row per kind, in table order: what docs/targets.md's table lists (a test holds them equal)."""
    def leaving(rules: KindRules) -> str:
        first = "`g`, then " if rules.resume_before_quit else "break in if running, then " \
            if rules.break_before_quit else ""
        return f"{first}`{rules.quit_command or 'Ctrl+B'}`: {rules.quit_says}"

    return [(f"`{name}`", rules.title, rules.debugger, "yes" if rules.runs else "no", leaving(rules))
            for name, rules in KINDS.items()]
