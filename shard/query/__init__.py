"""Query execution on one shard: from validated search parameters to this shard's best hits."""
