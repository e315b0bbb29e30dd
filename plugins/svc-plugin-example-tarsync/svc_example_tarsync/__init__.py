"""An example sync backend for svc: a mount's tree sent as a tar stream over the profile's SSH connection.

The entry point names ``svc_example_tarsync:hooks`` (a module and an attribute, which packaging tools require
before the ``[svc-api-1.2]`` range), so the package holds its hooks module as that attribute.
"""

from svc_example_tarsync import hooks as hooks
