"""Filter expressions (search.md §4): the shared tree; the parser arrives with issue 6."""
