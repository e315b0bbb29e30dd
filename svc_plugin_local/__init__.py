"""The ``local`` transport: Slurm commands run as subprocesses on this machine (a login node)."""
