"""Filter evaluation on a shard: the expression tree (``common.filter``) -> a bitmap of documents."""
