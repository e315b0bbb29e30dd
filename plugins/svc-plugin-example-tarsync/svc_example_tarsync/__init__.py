"""An example sync backend for svc: a mount's tree sent as a tar stream over the profile's SSH connection."""
