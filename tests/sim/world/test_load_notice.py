"""kd's load notification (kdmcp/sim/world/filters.py, activity._load_notice): after ``sxe ld``
the driver that loads while the target runs stops it in ``nt!DebugService2+0x5``, kd printing
only the location, as real sessions show; ``.lastevent`` names the load; ``sxe -c`` commands run
at the stop. Fast tier: in process (tests/sim/live.py)."""

from __future__ import annotations

from tests.sim.live import KDNET, debugger, play, run, until_stop

# set1 misc/a_12 (a Windows 10 17134 session): "kd> sxe ld:lsasrv.dll" / "kd> g" /
# "nt!DebugService2+0x5:" / "fffff803`7f3a70e5 cc              int     3"
NOTICE = "nt!DebugService2+0x5:\nfffff800`62d530a5 cc              int     3\n"



def test_sxe_ld_stops_at_the_drivers_load_in_debugservice2() -> None:
    with debugger(["kd", *KDNET]) as kd:
        assert run(kd, "sxe ld:sampledrv.sys") == ""  # kd prints nothing for a filter
        run(kd, "g")
        assert until_stop(kd).endswith(NOTICE)
        # set1 connect/a_10: "Last event: Load module KmdfHelloWorld.sys at fffff806`30580000"
        assert run(kd, ".lastevent").startswith("Last event: Load module sampledrv.sys at fffff800`60db0000\n")
        frames = run(kd, "k").splitlines()
        assert "nt!DebugService2+0x5" in frames[1] and "nt!IopLoadDriver+0x24c" in frames[4]
        assert run(kd, "u nt!DebugService2 L3").splitlines()[1:] == [
            "fffff800`62d530a0 418bc0          mov     eax,r8d",
            "fffff800`62d530a3 cd2d            int     2Dh",
            "fffff800`62d530a5 cc              int     3",
        ]
        assert "sampledrv" in run(kd, "lm m sampledrv")  # mapped when it is reported
        run(kd, "g")  # the load goes on; no second notice
        for _ in range(6):
            assert "DebugService2" not in play(kd)


def test_a_filter_for_another_image_does_not_stop() -> None:
    with debugger(["kd", *KDNET]) as kd:
        run(kd, "sxe ld:lsasrv.dll")
        run(kd, "g")
        for _ in range(6):
            assert "DebugService2" not in play(kd)
        assert kd.state == "running"


def test_sxe_c_runs_its_commands_at_the_stop() -> None:
    # set1 connect/a_10: '0: kd> sxe -c ".lastevent ; g" ld' / "0: kd> g" /
    # "Last event: Load module KmdfHelloWorld.sys at fffff806`30580000" / "  debugger time: ..."
    with debugger(["kd", *KDNET]) as kd:
        run(kd, 'sxe -c ".lastevent ; g" ld')
        run(kd, "g")
        until_stop(kd)
        pending = kd.pending
        assert pending is not None
        out = kd.capture(lambda: kd._drive(pending))
        assert out.startswith("Last event: Load module sampledrv.sys at fffff800`60db0000\n  debugger time: ")
        assert kd.state == "running"  # its g went on


def test_after_a_reboot_an_ld_filter_stops_at_each_boot_image() -> None:
    # set1 connect/a_09: ".reboot" / "Shutdown occurred at …" / "Waiting to reconnect..." / the
    # connect banner / "nt!DebugService2+0x5:" / int 3; connect/a_10 (sxe -c ".lastevent ; g" ld):
    # "Last event: Load module ntoskrnl.exe at …", "hal.dll", "kdnet.dll", "kd_02_8086.dll", …
    with debugger(["kd", *KDNET]) as kd:
        run(kd, 'sxe -c ".lastevent ; g" ld')
        run(kd, ".reboot")
        banner = kd.capture(kd.connected)
        assert banner.endswith("System Uptime: 0 days 0:00:20.534\n" + NOTICE)
        loaded = []
        for _ in range(4):
            pending = kd.pending
            assert pending is not None
            said = kd.capture(lambda p=pending: kd._drive(p))  # the filter's commands: .lastevent; g
            loaded.append(said.split(" at ")[0].removeprefix("Last event: Load module "))
            assert play(kd) == NOTICE
        assert loaded == ["ntoskrnl.exe", "hal.dll", "kdnet.dll", "kd_02_8086.dll"]


def test_a_reboot_without_an_ld_filter_just_reconnects() -> None:
    with debugger(["kd", *KDNET]) as kd:
        run(kd, ".reboot")
        assert kd.capture(kd.connected).endswith("System Uptime: 0 days 0:00:20.534\n")
        assert kd.state == "running"
