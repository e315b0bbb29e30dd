"""The host's built-in ``default`` renderer: a sandboxed Jinja2 template that turns a job definition into an
sbatch script (:mod:`svc_host.rendering.sbatch`), registered through :mod:`svc_host.rendering.hooks`."""
