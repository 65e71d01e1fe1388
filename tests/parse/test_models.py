"""``kdmcp.parse.models``: the ``Record`` union the server publishes, joined from the family modules."""

from __future__ import annotations

from typing import get_args

from pydantic import BaseModel, TypeAdapter

import kdmcp.parse.models as models
from kdmcp.parse.models import RECORD_KINDS, Record, RecordBase

# the published kinds, in the union's order (the server's output schema lists them so)
PUBLISHED_KINDS = (
    "stack",
    "registers",
    "modules",
    "processes",
    "threads",
    "analysis",
    "memory",
    "disassembly",
    "breakpoints",
    "target",
    "type_dump",
    "object",
    "exception_record",
    "error_code",
    "error",
    "text",
    "events",
    "expression",
    "symbols",
    "symbol_path",
    "symbol_load",
    "locals",
    "data_model",
)


def test_record_kinds_are_the_unions_kinds_in_order() -> None:
    members = get_args(get_args(Record)[0])
    assert tuple(m.model_fields["kind"].default for m in members) == PUBLISHED_KINDS
    assert RECORD_KINDS == PUBLISHED_KINDS
    assert len(set(RECORD_KINDS)) == len(RECORD_KINDS)
    mapping = TypeAdapter(Record).json_schema()["discriminator"]["mapping"]
    assert set(mapping) == set(RECORD_KINDS)


def test_every_model_is_exported_and_forbids_unknown_fields() -> None:
    exported = {name: getattr(models, name) for name in models.__all__}
    classes = [v for v in exported.values() if isinstance(v, type) and issubclass(v, BaseModel)]
    assert all(issubclass(m, RecordBase) for m in get_args(get_args(Record)[0]))
    assert {m.__name__ for m in get_args(get_args(Record)[0])} <= set(exported)
    assert all(c.model_config.get("extra") == "forbid" for c in classes)


# ------------------------------------------------------------- the served form (SERVED)


def _served(model: BaseModel) -> dict[str, object]:
    from kdmcp.parse.record_base import SERVED

    return model.model_dump(mode="json", exclude_none=True, exclude_defaults=True, context=SERVED)


def test_a_served_frame_leaves_out_a_call_site_that_only_spells_its_parts() -> None:
    spelled = models.Frame(call_site="nt!KiIdleLoop+0x54", module="nt", function="KiIdleLoop", offset="0x54")
    assert "call_site" not in _served(spelled) and spelled.model_dump()["call_site"] == "nt!KiIdleLoop+0x54"
    bare = models.Frame(call_site="nt!KeBugCheckEx", module="nt", function="KeBugCheckEx")
    assert "call_site" not in _served(bare)
    # Anything the parts do not say stays: an address, a different spelling.
    address = models.Frame(call_site="0x00007ff8`f16ece54", address="0x00007ff8f16ece54")
    assert _served(address)["call_site"] == "0x00007ff8`f16ece54"
    odd = models.Frame(call_site="nt!Foo+0x10 [inline]", module="nt", function="Foo", offset="0x10")
    assert _served(odd)["call_site"] == "nt!Foo+0x10 [inline]"


def test_a_served_type_field_leaves_out_a_bitfield_flag_its_type_says() -> None:
    bits = models.TypeField(offset="0x460", name="PicoCreated", type="Pos 10, 1 Bit", bitfield=True)
    assert _served(bits) == {"offset": "0x460", "name": "PicoCreated", "type": "Pos 10, 1 Bit"}
    valued = models.TypeField(offset="0x460", name="PicoCreated", value="0y1", bitfield=True)
    assert _served(valued)["bitfield"] is True


def test_a_served_analysis_keeps_only_the_sections_no_typed_field_holds() -> None:
    record = models.AnalysisRecord(
        raw="",
        module_name="myfault",
        stack=[models.Frame(call_site="nt!X")],
        fields={"MODULE_NAME": "myfault", "STACK_TEXT": "...", "IMAGE_NAME": "x.sys", "BUGCHECK_STR": "AV"},
    )
    # IMAGE_NAME stays: its typed field (image_name) is not set, so the section is all there is.
    assert _served(record)["fields"] == {"IMAGE_NAME": "x.sys", "BUGCHECK_STR": "AV"}
    assert record.model_dump()["fields"]["STACK_TEXT"] == "..."
    bare = models.AnalysisRecord(raw="", module_name="m", fields={"MODULE_NAME": "m"})
    assert "fields" not in _served(bare)
