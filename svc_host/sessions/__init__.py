"""Interactive sessions: a web app in a Slurm job, how it is launched, watched, and reached."""
