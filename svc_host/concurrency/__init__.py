"""Async building blocks with no knowledge of svc: single flight (one call per key), shared reads (one call per key
that started after its callers arrived) and coalescing workers."""
