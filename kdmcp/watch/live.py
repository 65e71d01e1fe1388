"""The ``kd-mcp watch`` loop: one frame (``--once``), or a live view redrawn as the files grow."""

from __future__ import annotations

import threading
from pathlib import Path

from rich.console import Console, RenderableType
from rich.live import Live

from kdmcp.watch.files import POLL_INTERVAL_S, TranscriptReader, follow
from kdmcp.watch.render import render


def run_watch(
    path: Path,
    wanted: str | None = None,
    *,
    once: bool = False,
    lines: int | None = None,
    console: Console | None = None,
    stop: threading.Event | None = None,
    interval: float = POLL_INTERVAL_S,
) -> int:
    """Show ``path``'s sessions until Ctrl+C (or ``stop``); 0 when it ends.

    Raises ``WatchRefused`` (missing or unsafe transcript) before anything is drawn. Without a
    terminal to redraw it prints one frame, as ``--once`` does: a pipe would otherwise get a
    new frame twice a second, forever.
    """
    reader = TranscriptReader(path)
    reader.check()
    # The first read is history: it must not make every session look "active now", so the
    # focus comes from the records' times; later log growth counts as activity at its arrival.
    reader.poll(None)
    console = console or Console()
    if once or not console.is_terminal:
        console.print(render(reader.state, wanted, lines=lines))
        return 0

    def frame() -> RenderableType:
        return render(reader.state, wanted, lines=lines, height=console.size.height)

    stop = stop or threading.Event()
    drawn = console.size
    try:
        with Live(
            frame(), console=console, screen=True, auto_refresh=False, redirect_stdout=False, redirect_stderr=False
        ) as live:

            def tick(changed: bool) -> None:
                nonlocal drawn
                if changed or console.size != drawn:
                    drawn = console.size
                    live.update(frame(), refresh=True)

            follow(reader, tick, stop, interval)
    except KeyboardInterrupt:  # the way out of a live view: not an error
        pass
    return 0
