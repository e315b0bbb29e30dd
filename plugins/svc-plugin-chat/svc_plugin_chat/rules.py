"""Which status changes become chat messages: a list of ``kind:state`` rules.

``SVC_CHAT_EVENTS="job:failed, workflow_run:terminal, sweep_run:terminal"`` is the default. ``kind`` is
``job``, ``workflow_run`` or ``sweep_run``; the state is a state name (``FAILED``, ``completed``...),
``failed`` (for jobs: every state that means the job did not succeed), ``terminal`` (any end state) or ``*``.
A workflow run that is a sweep cell never notifies on its own: its sweep sends one summary.
"""

from __future__ import annotations

from dataclasses import dataclass

from svc_host.plugin import ConfigError

KINDS = {
    "job": "job.status_changed",
    "workflow_run": "workflow_run.status_changed",
    "sweep_run": "sweep_run.status_changed",
}
JOB_FAILED = frozenset({"FAILED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "BOOT_FAIL", "DEADLINE"})
JOB_TERMINAL = JOB_FAILED | {"COMPLETED", "CANCELLED", "PREEMPTED"}
RUN_TERMINAL = frozenset({"completed", "failed", "cancelled"})
RUN_FAILED = frozenset({"failed"})


@dataclass(frozen=True)
class Rule:
    """Notify on ``event`` (an event name) when the new state is in ``states`` (empty: any state)."""

    event: str
    states: frozenset[str]

    def matches(self, event: str, to_state: str) -> bool:
        return event == self.event and (not self.states or to_state.upper() in self.states)


def parse_rules(text: str) -> tuple[Rule, ...]:
    """Rules from ``kind:state`` items separated by commas; a mistake is a ``ConfigError`` naming it."""
    rules: list[Rule] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        kind, _, state = item.partition(":")
        kind, state = kind.strip().lower(), (state.strip() or "*")
        if kind not in KINDS:
            raise ConfigError(f"SVC_CHAT_EVENTS item {item!r}: kind must be one of {', '.join(KINDS)}")
        rules.append(Rule(KINDS[kind], _states(kind, state)))
    if not rules:
        raise ConfigError("SVC_CHAT_EVENTS is set but names no event; unset it for the defaults")
    return tuple(rules)


def _states(kind: str, state: str) -> frozenset[str]:
    word = state.lower()
    if word == "*":
        return frozenset()
    if word == "terminal":
        return frozenset(s.upper() for s in (JOB_TERMINAL if kind == "job" else RUN_TERMINAL))
    if word == "failed":
        return frozenset(s.upper() for s in (JOB_FAILED if kind == "job" else RUN_FAILED))
    return frozenset({state.upper()})


DEFAULT_RULES = parse_rules("job:failed, workflow_run:terminal, sweep_run:terminal")
