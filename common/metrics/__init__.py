"""Prometheus metrics shared by every role: one registry per process, collected by the gateway over
gRPC (``Operations.Metrics``) and rendered as one exposition (docs/architecture.md, "Metrics")."""
