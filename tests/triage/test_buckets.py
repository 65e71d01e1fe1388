"""The bucket rule, the stack hash and the summary's byte budget (fast tier: made-up records)."""

from __future__ import annotations

import json

from kdmcp import parse as parsing
from kdmcp.triage import buckets
from kdmcp.triage.models import BugcheckStop
from tests.triage.helpers import record, small_run


def test_frames_are_written_module_function_offset() -> None:
    frame = parsing.Frame(module="nt", function="KiPageFault", offset="0x469")
    assert buckets.frame_text(frame) == "nt!KiPageFault+0x469"
    assert buckets.frame_text(parsing.Frame(module="myfault", offset="0x1981")) == "myfault+0x1981"
    assert buckets.frame_text(parsing.Frame(address="0x00007ff8`f16ece54")) == "0x00007ff8`f16ece54"
    assert buckets.frame_text(parsing.Frame()) is None


def test_a_symbolised_frame_drops_its_offset_an_unsymbolised_one_keeps_it() -> None:
    assert buckets.normalised("myfault!Dispatch+0x1c") == "myfault!Dispatch"
    assert buckets.normalised("myfault+0x1981") == "myfault+0x1981"


def test_the_stack_hash_ignores_offsets_of_symbolised_frames_only() -> None:
    one = buckets.stack_hash(["a!f+0x1", "b!g+0x2"])
    assert one == buckets.stack_hash(["a!f+0x10", "B!G+0x20"]) and len(one) == 16
    assert one != buckets.stack_hash(["b!g+0x2", "a!f+0x1"])
    assert buckets.stack_hash(["a+0x1"]) != buckets.stack_hash(["a+0x2"])


def test_the_culprit_skips_the_crash_machinery() -> None:
    kernel = ["nt!KeBugCheckEx", "nt!KiBugCheckDispatch+0x69", "nt!KiPageFault+0x469", "myfault!Leak+0x19"]
    assert buckets.culprit(kernel) == "myfault!Leak"
    assert buckets.past_machinery(kernel) == ["myfault!Leak+0x19"]
    user = ["KERNELBASE!RaiseException+0x69", "app!Parse+0x12"]
    assert buckets.culprit(user) == "app!Parse"
    assert buckets.culprit(["nt!KeBugCheckEx"]) is None and buckets.culprit([]) is None


def test_the_key_is_the_failure_bucket_else_class_and_culprit_else_unknown() -> None:
    assert buckets.bucket_key("AV_myfault!Leak", "0xd1", "myfault!Leak") == "AV_myfault!Leak"
    assert buckets.bucket_key(None, "0xd1", "myfault!Leak") == "0xd1 myfault!Leak"
    assert buckets.bucket_key(None, None, "app!Parse") == "app!Parse"
    assert buckets.bucket_key(None, "0xc0000005", None) == "0xc0000005"
    assert buckets.bucket_key(None, None, None) == "unknown"


def test_the_summary_orders_buckets_largest_first_and_counts_failures() -> None:
    summary = buckets.summarise(small_run(), "/out/run.jsonl")
    assert [(b.key, b.count) for b in summary.buckets] == [("A", 5), ("B", 1)]
    assert summary.buckets[0].names == ["a0.dmp", "a1.dmp", "a2.dmp"] and summary.buckets[0].stacks == 2
    assert summary.buckets[1].stop == "0xc0000005 Access violation"
    assert summary.buckets[1].frames == ["app!Parse+0x12"]  # the dispatcher left out
    assert summary.failed == {"truncated": 1} and summary.dumps == 7 and summary.bucketed == 6


def test_past_the_byte_budget_buckets_are_counted_not_listed() -> None:
    records = [record(f"{n}.dmp", f"{n:064x}", f"KEY_{n:04d}_" + "x" * 80,
                      bugcheck=BugcheckStop(code="0xd1", name="DRIVER_IRQL_NOT_LESS_OR_EQUAL"),
                      frames=[f"drv{n}!Function{k}+0x10" for k in range(8)]) for n in range(400)]
    summary = buckets.summarise(records, "/out/run.jsonl")
    listed = sum(len(b.model_dump_json(exclude_defaults=True)) + 1 for b in summary.buckets)
    assert listed <= buckets.SUMMARY_BYTES and summary.buckets
    assert sum(b.count for b in summary.buckets) + summary.more_dumps == 400
    assert len(summary.buckets) + summary.more_buckets == 400
    assert len(json.dumps(summary.model_dump())) < 8192


def test_long_names_and_keys_are_cut() -> None:
    summary = buckets.summarise([record("n" * 500, "1" * 64, "k" * 500)], "/x.jsonl")
    assert len(summary.buckets[0].key) == 96 and len(summary.buckets[0].names[0]) == 96
