"""svc plugin for one site: its Slurm reached through a login node, every job charged to a fixed account/QOS.

The entry point names ``svc_example_site:hooks`` (a module and an attribute, which packaging tools require before
the ``[svc-api-1.1]`` range), so the package holds its hooks module as that attribute.
"""

from svc_example_site import hooks as hooks
