"""The parser tests' samples, as data.

Samples come from two sources, and the origin of each is data: the corpus samples in
``fixtures/corpus/`` (``corpus.py`` loads them; ``index.json`` names each one's source,
command, debugger and architecture) are checked through each parser test module's ``CHECKS``
table, keyed by sample, in the module of the parser the sample's command routes to;
hand-written excerpts of layouts the corpus lacks sit in the test of the parser that reads
them, with a comment naming where the layout was published.
"""
