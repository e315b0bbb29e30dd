"""The REST API: an app factory that mounts every plugin's routers, the host's own included."""
