"""The plugin machinery: hookspecs, the plugin manager, the records plugins return, plugin settings and tasks."""
