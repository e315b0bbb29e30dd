"""A sweep as one Slurm job array (pure): whether its cells can be one, and the one script every task runs.

A sweep is submitted as an array when every cell is one job and the cells' jobs differ only in their
``command`` (the args are substituted there): same name, resources, environment (values included),
``work_dir`` and ``log_dir``, and no user ``script``. Cell ``i`` is array task ``i``, and the script picks the
cell's command with a ``case`` on ``$SLURM_ARRAY_TASK_ID``. Each command is written as data, never
re-evaluated beyond what a plain run does: a list command as its words quoted with :func:`shlex.join`, a
string command (the user's own shell line, placed verbatim in a plain run's script) as one
:func:`shlex.quote`-d word run by ``eval``, which runs exactly that line. Logs go to ``<stem>-%A_%a.out``
(``%A_%a`` is the task's id, ``123_4``, so the task's log paths are the plain run's with its id for ``%j``).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from svc_host.domain.submission import JobDefinition, RenderedScript
from svc_host.workflows.submission import with_directive

TASK_VARIABLE = "SLURM_ARRAY_TASK_ID"


def array_definition(definitions: Sequence[JobDefinition]) -> JobDefinition | None:
    """The one job every task runs (cell ``i``'s command for task ``i``), or None when the cells' jobs differ in
    anything but their command, or one has a user script (each cell is then submitted on its own)."""
    if not definitions:
        return None
    first = definitions[0]
    shared = first.model_dump(exclude={"command", "dependency"})
    for definition in definitions:
        if definition.script is not None or definition.command is None or definition.dependency is not None:
            return None
        if definition.model_dump(exclude={"command", "dependency"}) != shared:
            return None
    return first.model_copy(update={"command": dispatch([d.command for d in definitions if d.command is not None])})


def dispatch(commands: Sequence[str | list[str]]) -> str:
    """A bash ``case`` running command ``i`` for array task ``i`` (an unknown task exits 2 with an ``svc:`` line)."""
    lines = [f'case "${{{TASK_VARIABLE}:-}}" in']
    for index, command in enumerate(commands):
        run = shlex.join(command) if isinstance(command, list) else f"eval {shlex.quote(command)}"
        lines.append(f"{index}) {run} ;;")
    lines.append(f"*) printf 'svc: no sweep cell for array task %s\\n' \"${{{TASK_VARIABLE}:-}}\" >&2; exit 2 ;;")
    lines.append("esac")
    return "\n".join(lines)


def array_script(script: RenderedScript, tasks: str) -> RenderedScript:
    """``script`` as an array of ``tasks`` (``0-9%2``): an ``#SBATCH --array`` line after the shebang, and its
    own ``--output``/``--error`` per task (``%A_%a`` for ``%j``). The reported paths keep ``%j``: a task's are
    ``log_paths_for("<array>_<i>")``."""
    lines = script.text.split("\n")
    for number, line in enumerate(lines):
        if line.startswith(("#SBATCH --output=", "#SBATCH --error=")):
            lines[number] = line.replace("%j", "%A_%a")
    return with_directive(script.model_copy(update={"text": "\n".join(lines)}), "array", tasks)
