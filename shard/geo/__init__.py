"""Geo search: documents' ``_geo`` points, distances, radius and bounding-box filters (search.md §4.4, §5)."""
