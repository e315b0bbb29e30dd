"""``python -m svc_host`` runs the ``svc`` command.

For ``-m`` Python puts the working directory first on ``sys.path``, so plugin discovery (``*.dist-info`` of every
``sys.path`` entry) and every later import would look in whatever directory svc runs in: a cloned repository could
bring a plugin. It is dropped before anything is loaded; the installed ``svc`` script never had it.
"""

import os
import sys

if sys.path and not sys.flags.safe_path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from svc_host.cli import main  # only once the working directory is off sys.path

main()
