"""The ``rsync`` sync backend: a mount's local tree copied to the cluster with rsync over the profile's SSH."""
