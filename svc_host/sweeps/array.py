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


def array_definition(definitions: Sequence[JobDefinition], *, fail_fast: bool = False) -> JobDefinition | None:
    """The one job every task runs (cell ``i``'s command for task ``i``), or None when the cells' jobs differ in
    anything but their command, or one has a user script (each cell is then submitted on its own). With
    ``fail_fast`` a task whose command fails holds the array's tasks not started yet before it ends (see
    :func:`dispatch`)."""
    if not definitions:
        return None
    first = definitions[0]
    shared = first.model_dump(exclude={"command", "dependency"})
    for definition in definitions:
        if definition.script is not None or definition.command is None or definition.dependency is not None:
            return None
        if definition.model_dump(exclude={"command", "dependency"}) != shared:
            return None
    commands = [definition.command for definition in definitions if definition.command is not None]
    return first.model_copy(update={"command": dispatch(commands, fail_fast=fail_fast)})


def dispatch(commands: Sequence[str | list[str]], *, fail_fast: bool = False) -> str:
    """A bash ``case`` running command ``i`` for array task ``i`` (an unknown task exits 2 with an ``svc:`` line).

    With ``fail_fast`` the command runs in a subshell (so an ``exit`` in it ends only the command), and when it
    fails the task holds its array (``scontrol hold``: the tasks not started yet stay pending) before it exits
    with the command's status: Slurm would otherwise start the next task in the slot the failed one frees,
    before svc has seen the failure. svc then cancels the held tasks. The hold is best effort: a task Slurm kills
    (a timeout, out of memory) cannot run it, and svc cancels what has not started once it sees the failure.
    """
    lines = [f'case "${{{TASK_VARIABLE}:-}}" in']
    for index, command in enumerate(commands):
        run = shlex.join(command) if isinstance(command, list) else f"eval {shlex.quote(command)}"
        lines.append(f"{index}) ( {run} ) ;;" if fail_fast and not isinstance(command, list) else f"{index}) {run} ;;")
    lines.append(f"*) printf 'svc: no sweep cell for array task %s\\n' \"${{{TASK_VARIABLE}:-}}\" >&2; exit 2 ;;")
    lines.append("esac")
    if fail_fast:
        lines.append("svc_status=$?")
        lines.append('[ "$svc_status" -eq 0 ] || scontrol hold "${SLURM_ARRAY_JOB_ID:-}" >/dev/null 2>&1')
        lines.append('exit "$svc_status"')
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
