"""Pure text-to-record parsing of kd/cdb output (no I/O)."""

from kdmcp.parse.prompt import PROMPT_PATTERN, Prompt, match_prompt

__all__ = ["PROMPT_PATTERN", "Prompt", "match_prompt"]
