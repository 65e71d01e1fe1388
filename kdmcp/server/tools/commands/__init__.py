"""The commands family: any debugger command (``kd_command``) and the fixed one-command typed reads."""
