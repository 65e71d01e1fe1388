"""``kd_command`` of a line that runs commands, then the target (``bp nt!NtCreateFile; bl; g``): the
result is the commands' output, with its own ``output_id``; what the target prints after it comes
as its DbgPrint events (issue 29, item 1's class; kdmcp/engine/run_line.py)."""

from __future__ import annotations

import pytest

from tests.server.helpers import CANARY_KEY, in_memory, make_app, result_data

pytestmark = [pytest.mark.anyio, pytest.mark.process]  # starts the simulator (tests/tiers.py)

BL_ROW = "     0 e Disable Clear  fffff800`62c3a1e0     0001 (0001) nt!NtCreateFile"


async def test_the_commands_before_g_are_the_result_and_what_the_target_prints_its_events():
    async with in_memory(make_app()) as client:
        started = await client.call_tool("start_kd", {"port": 50000, "key": CANARY_KEY, "initial_break": True})
        assert not started.is_error, started
        went = result_data(await client.call_tool("kd_command", {"command": "bp nt!NtCreateFile; bl; g"}))
        assert went["output"].splitlines() == [BL_ROW], went
        assert went.get("record") is None and went["state"] in ("running", "broken")
        assert not [e for e in went.get("events", []) if e["kind"] == "dbgprint"]  # nothing of it is DbgPrint
        whole = result_data(await client.call_tool("read_output", {"output_id": went["output_id"]}))
        assert BL_ROW in whole["_body"] and "KDMCP" not in whole["_body"].split(BL_ROW)[1]
        stop = result_data(await client.call_tool("wait_for_stop", {"timeout_s": 20}))
        assert stop["stop"]["reason"] == "breakpoint", stop
        events = went.get("events", []) + stop.get("events", [])
        prints = [e["text"] for e in events if e["kind"] == "dbgprint"]
        assert [p.strip() for p in prints] == ["myfault: IOCTL 0x83362000 received"], events
        # an error before g ends the line: the answer is kd's error, and the target stays stopped
        refused = result_data(await client.call_tool("kd_command", {"command": "r foo; g"}))
        assert refused["state"] == "broken" and "Bad register error in 'r foo'" in refused["output"], refused


# The text-only server (the default) reads a kd_command record's kind alone (parse.kind_of); its text
# is the one the record, parsed in full, gives: the same bytes as a --structured server's text block.
TEXT_ONLY_COMMANDS = ["r", "r rip", "r foo", "~0s", "k", "lm", "!process 0 0", "vertarget", ".echo hello", "dd rsp L4",
                      "!bogus_extension", "version"]


async def test_a_text_only_result_reads_as_the_parsed_records_text():
    texts: dict[bool, list[str]] = {}
    for structured in (True, False):
        app = make_app(structured=structured, policy="full")  # an unknown extension runs: kd refuses it
        async with in_memory(app) as client:
            await client.call_tool("start_kd", {"port": 50000, "key": CANARY_KEY, "initial_break": True})
            texts[structured] = []
            for command in TEXT_ONLY_COMMANDS:
                result = await client.call_tool("kd_command", {"command": command})
                assert not result.is_error, result
                # the header's elapsed time differs from run to run: the rest is compared
                header, _, body = result.content[0].text.partition("\n")
                texts[structured].append(" ".join(w for w in header.split() if not w.replace(".", "").isdigit()
                                                  and w != "ms") + "\n" + body)
                assert (result.structured_content is None) is not structured
    assert texts[False] == texts[True]
    unparsed = {command for command, text in zip(TEXT_ONLY_COMMANDS, texts[False], strict=True)
                if "unparsed" in text.partition("\n")[0]}
    assert ".echo hello" in unparsed and not unparsed & {"r", "r rip", "~0s", "k"}, unparsed
