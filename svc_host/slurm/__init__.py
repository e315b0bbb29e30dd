"""Pure Slurm knowledge: argv builders, output parsers and the one job-state table.

Nothing here runs a command; transports run the argv built by :mod:`svc_host.slurm.argv` and hand
the text to :mod:`svc_host.slurm.parse`.
"""
