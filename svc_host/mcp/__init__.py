"""The MCP server: tools from ``svc_mcp_tools`` (the host's own and plugins') served over stdio."""
