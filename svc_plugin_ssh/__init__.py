"""The ``ssh`` plugin: one transport per SSH profile, Slurm commands as channels on one kept-alive connection."""
