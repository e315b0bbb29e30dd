"""Pydantic models shared by REST, MCP and the CLI."""
