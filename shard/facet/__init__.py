"""Facet values: each faceted field's leaf values -> documents, for filters (and later facets and sort)."""
