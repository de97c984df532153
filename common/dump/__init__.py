"""Dumps (``docs/dump-format.md``): the reference engine's format v6, read and written, so a dump moves
between Sift and the reference both ways. ``reader`` unpacks and checks, ``writer`` packs and
publishes atomically, ``tasks`` translates task lines, ``documents`` the documents' ``_vectors``."""
