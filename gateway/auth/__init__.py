"""Authentication and authorisation: API keys, tenant tokens and each route's action (core.md §3.6-§3.8)."""
