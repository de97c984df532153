"""One blueprint per API resource, named after it."""
