"""Async building blocks with no knowledge of svc: single flight (one call per key) and coalescing workers."""
