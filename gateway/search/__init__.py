"""Search on the gateway side: parameter validation, fan-out request and the merge of shard hits."""
