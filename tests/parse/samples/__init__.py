"""The parser tests' samples, as data: the real-transcript corpus (``corpus``) and its checks' helpers."""
