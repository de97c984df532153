"""The ``sift`` command and the launcher: the entry point above every role (gateway, shards,
scheduler), which it starts as child processes; the roles never import it."""
