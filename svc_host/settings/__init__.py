"""Where svc's settings live: layered config, SSH profiles and mounts, paths, secrets masking, atomic files."""
