"""Filter expressions (search.md §4): the shared tree (``ast``) and the parser (``parse.parse_filter``)."""
