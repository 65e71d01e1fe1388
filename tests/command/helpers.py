"""Shorthands shared by the classification tests: the class names, and a line's classes or pieces."""

from __future__ import annotations

from kdmcp.command import CommandClass, classify

READ = CommandClass.READ
MEMORY_WRITE = CommandClass.MEMORY_WRITE
EXECUTION = CommandClass.EXECUTION
HOST_EXEC = CommandClass.HOST_EXEC
CODE_LOAD = CommandClass.CODE_LOAD
FILE_WRITE = CommandClass.FILE_WRITE
TARGET_DESTRUCTIVE = CommandClass.TARGET_DESTRUCTIVE
SESSION_ENDING = CommandClass.SESSION_ENDING
HOST_FILE_READ = CommandClass.HOST_FILE_READ
NETWORK_PATH = CommandClass.NETWORK_PATH
SETTINGS_CHANGE = CommandClass.SETTINGS_CHANGE
OUTPUT_CONTROL = CommandClass.OUTPUT_CONTROL
UNKNOWN = CommandClass.UNKNOWN


def classes(command: str) -> set[CommandClass]:
    return {f.command_class for f in classify(command)}


def pieces(command: str, command_class: CommandClass) -> list[str]:
    return [f.piece for f in classify(command) if f.command_class is command_class]
