"""Workflows: YAML files of jobs (``model``, ``load``, ``dag``, ``files``) and the one run engine (``engine``).

See ``docs/workflows.md``. The pieces, pure first: ``source`` (YAML with locations), ``templating``
(sandboxed args), ``model``, ``load``, ``dag``, ``plan`` (the engine's decisions); then ``files`` (where
files live), ``prepare`` (request -> run rows), ``store`` (repository), ``submission``
(crash-safe sbatch), ``runner`` (a run's steps) and ``engine`` (the one engine per process).
"""
