"""Retries by how an attempt ended: the pure decision, the plan that carries it, and the workflow YAML."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from svc_host.slurm.states import normalize_state
from svc_host.workflows.load import check_workflow, load_workflow
from svc_host.workflows.model import Dependency
from svc_host.workflows.plan import RETRYING, WAITING, JobView, Update, plan
from svc_host.workflows.retries import (
    Ended,
    Escalate,
    GiveUp,
    MemoryRule,
    OnInterruption,
    Retry,
    RetryPolicy,
    TimeRule,
    decide,
    format_memory,
    format_time,
    memory_mb,
)

NOW = datetime(2026, 1, 1, tzinfo=UTC)
DEFAULT = RetryPolicy()
ESCALATING = RetryPolicy(
    escalate=Escalate(memory=MemoryRule(factor=2, max="4G"), time=TimeRule(factor=1.5, max="0:05:00"))
)


def ended(state: str, policy: RetryPolicy = DEFAULT, **fields: Any) -> Retry | GiveUp:
    fields.setdefault("interruptions_left", policy.on_interruption.retries)
    fields.setdefault("retries_left", policy.retry)
    return decide(Ended(state=state, policy=policy, **fields))


# -- the decision, by end state ------------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["NODE_FAIL", "NF", "PREEMPTED", "PR", "BOOT_FAIL", "BF"])
def test_interruptions_retry_automatically_at_once_within_the_default_budget(raw: str) -> None:
    state = normalize_state(raw).value  # Slurm's long names (sacct) and short codes (squeue %t)
    first = ended(state, node="gpu07")
    assert first == Retry(f"{state}: retried automatically, 1 of 2", at_once=True, retries_left=0, interruptions_left=1)
    second = ended(state, interruptions_left=1)
    assert isinstance(second, Retry)
    assert second.reason == f"{state}: retried automatically, 2 of 2"
    assert ended(state, interruptions_left=0) == GiveUp(f"{state}: not retried (all 2 automatic retries used)")


def test_an_interruption_can_exclude_the_node_it_ran_on_and_the_budget_can_be_zero() -> None:
    policy = RetryPolicy(on_interruption=OnInterruption(retries=3, exclude_node=True))
    retried = ended("NODE_FAIL", policy, node="gpu[07-08]")
    assert isinstance(retried, Retry)
    assert retried.exclude == "gpu[07-08]"
    assert retried.reason == "NODE_FAIL: retried automatically, 1 of 3, excluding gpu[07-08]"
    unplaced = ended("BOOT_FAIL", policy, node=None)
    assert isinstance(unplaced, Retry)
    assert unplaced.exclude is None
    off = RetryPolicy(on_interruption=OnInterruption(retries=0))
    assert ended("PREEMPTED", off) == GiveUp("PREEMPTED: not retried (on_interruption.retries is 0)")


def test_out_of_memory_is_retried_only_under_a_memory_rule_with_doubled_memory_up_to_the_cap() -> None:
    assert ended("OUT_OF_MEMORY", memory="1G") == GiveUp("OUT_OF_MEMORY: not retried (no escalate.memory rule)")
    first = ended("OUT_OF_MEMORY", ESCALATING, memory="1G")
    assert first == Retry(
        "OUT_OF_MEMORY: memory 1G -> 2G (x2, cap 4G)",
        at_once=True,
        retries_left=0,
        interruptions_left=2,
        resources={"memory_per_node": "2G"},
    )
    capped = ended("OUT_OF_MEMORY", ESCALATING, memory="3000M")
    assert isinstance(capped, Retry)
    assert capped.resources == {"memory_per_node": "4G"}  # 6000M held to the cap
    assert ended("OUT_OF_MEMORY", ESCALATING, memory="4096") == GiveUp(
        "OUT_OF_MEMORY: not retried (memory 4096 is at the cap 4G)"
    )
    unset = ended("OUT_OF_MEMORY", ESCALATING, memory=None)
    assert isinstance(unset, Retry)
    assert unset.reason == "OUT_OF_MEMORY: memory the partition default -> 4G (x2, cap 4G)"


def test_timeout_is_retried_only_under_a_time_rule_in_whole_minutes_up_to_the_cap() -> None:
    assert ended("TIMEOUT", time_limit="1") == GiveUp("TIMEOUT: not retried (no escalate.time rule)")
    first = ended("TIMEOUT", ESCALATING, time_limit="1")
    assert isinstance(first, Retry)
    assert first.reason == "TIMEOUT: time 1 -> 0:02:00 (x1.5, cap 0:05:00)"  # 90 s rounds up to 2 minutes
    assert first.resources == {"time_limit": "0:02:00"}
    assert first.at_once
    later = ended("TIMEOUT", ESCALATING, time_limit="0:04:00")
    assert isinstance(later, Retry)
    assert later.resources == {"time_limit": "0:05:00"}
    assert ended("TIMEOUT", ESCALATING, time_limit="5") == GiveUp("TIMEOUT: not retried (time 5 is at the cap 0:05:00)")
    assert ended("TIMEOUT", ESCALATING, time_limit="UNLIMITED") == GiveUp(
        "TIMEOUT: not retried (the time limit is UNLIMITED)"
    )


def test_retry_n_alone_no_longer_retries_out_of_memory_or_timeout() -> None:
    opted = RetryPolicy(retry=3)
    assert isinstance(ended("OUT_OF_MEMORY", opted, memory="1G"), GiveUp)
    assert isinstance(ended("TIMEOUT", opted, time_limit="10"), GiveUp)


@pytest.mark.parametrize("state", ["FAILED", "DEADLINE"])
def test_plain_failures_are_retried_only_when_opted_in_after_the_delay(state: str) -> None:
    assert ended(state) == GiveUp(f"{state}: not retried (no 'retry' opted in)")
    opted = RetryPolicy(retry=2)
    assert ended(state, opted) == Retry(f"{state}: retry 1 of 2", at_once=False, retries_left=1, interruptions_left=2)
    assert ended(state, opted, retries_left=0) == GiveUp(f"{state}: not retried (all 2 retries used)")


def test_cancelled_is_never_retried_and_completed_needs_no_reason() -> None:
    generous = RetryPolicy(retry=5, on_interruption=OnInterruption(retries=5))
    assert ended("CANCELLED", generous) == GiveUp("CANCELLED: never retried")
    assert ended("COMPLETED", generous) == GiveUp(None)


def test_sizes_and_times_round_trip_in_slurms_forms() -> None:
    assert [memory_mb(text) for text in ("16G", "500M", "64000", "1T", "2048K", "16gb")] == [
        16384,
        500,
        64000,
        1048576,
        2,
        16384,
    ]
    assert [format_memory(mb) for mb in (2048, 1536, 100)] == ["2G", "1536M", "100M"]
    assert [format_time(s) for s in (120, 5400, 90000)] == ["0:02:00", "1:30:00", "1-01:00:00"]
    with pytest.raises(ValueError, match="not a memory size"):
        memory_mb("lots")


# -- the plan carries the decision ---------------------------------------------------------------------------


def job(name: str, *deps: str, **fields: Any) -> JobView:
    fields.setdefault("status", WAITING)
    return JobView(name=name, dependencies=tuple(Dependency.parse(d) for d in deps), **fields)


def test_the_plan_escalates_an_oom_attempt_and_resubmits_it_at_once_with_the_new_memory() -> None:
    jobs = [
        job("a", status="RUNNING", record_state="OUT_OF_MEMORY", job_id="1", policy=ESCALATING, memory="50M"),
        job("b", "a"),
    ]
    decided = plan(jobs, NOW)
    assert decided.updates["a"] == Update(
        RETRYING,
        retries_left=0,
        interruptions_left=0,
        next_retry_at=NOW,
        resources={"memory_per_node": "100M"},
        note="OUT_OF_MEMORY: memory 50M -> 100M (x2, cap 4G)",
    )
    assert decided.submit == [("a", [])]  # due now; b waits in svc while a may escalate again
    assert decided.run_status is None


def test_a_job_that_may_escalate_keeps_its_children_in_svc() -> None:
    jobs = [job("a", policy=ESCALATING), job("b", "a")]
    assert plan(jobs, NOW).submit == [("a", [])]


def test_an_interruption_budget_lets_afterok_children_go_to_slurm_but_holds_afterany_ones() -> None:
    jobs = [job("a", interruptions_left=2), job("b", "a"), job("c", "afterany:a"), job("d", "afternotok:a")]
    assert plan(jobs, NOW).submit == [("a", []), ("b", [("afterok", "a")])]


def test_a_pending_child_of_an_interrupted_parent_is_cancelled_and_follows_the_new_attempt() -> None:
    jobs = [
        job("a", status="RUNNING", record_state="PREEMPTED", job_id="1", interruptions_left=2, node="n1"),
        job("b", "a", status="PENDING", record_state="PENDING", job_id="2"),
        job("c", "b", status="PENDING", record_state="PENDING", job_id="3"),
    ]
    decided = plan(jobs, NOW)
    assert decided.updates["a"].status == RETRYING
    assert decided.updates["a"].note == "PREEMPTED: retried automatically, 1 of 2"
    assert decided.cancel == ["b", "c"]
    assert decided.updates["b"] == Update(WAITING, note="cancelled while pending: a is retried")
    assert decided.updates["c"] == Update(WAITING, note="cancelled while pending: b is retried")
    assert decided.submit == [("a", []), ("b", [("afterok", "a")]), ("c", [("afterok", "b")])]


def test_an_exhausted_interruption_budget_fails_the_run_with_the_reason_on_the_attempt() -> None:
    jobs = [job("a", status="RUNNING", record_state="NODE_FAIL", job_id="9", attempt=3)]
    decided = plan(jobs, NOW)
    assert decided.updates["a"] == Update("NODE_FAIL", note="NODE_FAIL: not retried (all 2 automatic retries used)")
    assert decided.run_status == "failed"
    assert decided.run_error == "job 'a' ended NODE_FAIL after 3 attempts"


def test_the_plan_passes_the_excluded_node_on() -> None:
    policy = RetryPolicy(on_interruption=OnInterruption(exclude_node=True))
    jobs = [
        job("a", status="RUNNING", record_state="NODE_FAIL", job_id="1", policy=policy, interruptions_left=2, node="n3")
    ]
    update = plan(jobs, NOW).updates["a"]
    assert update.exclude == "n3"
    assert update.next_retry_at == NOW


def test_an_opted_in_failure_still_waits_for_its_delay() -> None:
    jobs = [job("a", status="RUNNING", record_state="FAILED", job_id="1", retries_left=1, policy=RetryPolicy(retry=1))]
    decided = plan(jobs, NOW)
    assert decided.updates["a"].next_retry_at == NOW + timedelta(seconds=60)
    assert decided.submit == []


# -- the workflow file ---------------------------------------------------------------------------------------

RULES = """\
name: rules
jobs:
  - name: train
    command: python train.py
    resources: {memory_per_node: 1G, time_limit: "30"}
    on_interruption: {retries: 3, exclude_node: true}
    escalate:
      memory: {factor: 2, max: 8G}
      time: {factor: 1.5, max: "2:00:00"}
"""


def test_the_yaml_declares_the_rules() -> None:
    train = load_workflow(RULES).job("train")
    assert train.retry_policy == RetryPolicy(
        on_interruption=OnInterruption(retries=3, exclude_node=True),
        escalate=Escalate(memory=MemoryRule(factor=2, max="8G"), time=TimeRule(factor=1.5, max="2:00:00")),
    )
    assert load_workflow("name: x\njobs:\n  - {name: a, command: 'true'}\n").job("a").retry_policy == DEFAULT


def test_bad_rules_are_reported_with_their_lines() -> None:
    text = """\
name: bad
jobs:
  - name: a
    command: "true"
    escalate:
      memory: {factor: 1, max: 8G}
      time: {factor: 2, max: UNLIMITED}
  - name: b
    command: "true"
    escalate: {memory: {factor: 2, max: lots}, disk: {factor: 2, max: 1G}}
    on_interruption: {retries: -1, exclude_nodes: true}
"""
    _, found = check_workflow(text)
    assert found == [
        "line 6: jobs[0].escalate.memory.factor: Input should be greater than 1",
        "line 7: jobs[0].escalate.time.max: the cap must be a finite time such as 4:00:00",
        "line 11: jobs[1].on_interruption.retries: Input should be greater than or equal to 0",
        "line 11: jobs[1].on_interruption.exclude_nodes: Extra inputs are not permitted",
        "line 10: jobs[1].escalate.memory.max: 'lots' is not a memory size like 16G, 500M or 64000 (megabytes)",
        "line 10: jobs[1].escalate.disk: Extra inputs are not permitted",
    ]
