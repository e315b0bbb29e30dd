"""svc plugin for one site: its Slurm reached through a login node, every job charged to a fixed account/QOS."""
