"""The ioctl family of tools."""
