"""The site's limits from output recorded on the dev cluster (tests/fixtures/slurm/record-limits.sh)."""

from __future__ import annotations

from pathlib import Path

import pytest

from svc_host.errors import SlurmParseError
from svc_host.slurm import limits

FIXTURES = Path(__file__).parents[2] / "fixtures" / "slurm"


def recorded(name: str) -> str:
    return (FIXTURES / name).read_text()


def site(user: str = "root") -> limits.SiteLimits:
    return limits.site_limits(
        user=user,
        user_out=recorded("sacctmgr_user.txt"),
        assoc_out=recorded("sacctmgr_assoc.txt"),
        qos_out=recorded("sacctmgr_qos.txt"),
        config_out=recorded("scontrol_show_config.txt"),
    )


def test_config_gives_array_size_job_count_and_cluster() -> None:
    found = site()
    assert (found.cluster, found.max_array_size, found.max_job_count) == ("svcdev", 1001, 10000)
    assert (found.user, found.account, found.default_qos) == ("root", "root", "normal")


def test_qos_limits_are_read_and_unset_ones_are_none() -> None:
    qos = limits.parse_qos(recorded("sacctmgr_qos.txt"))
    assert qos["svcrec_qos"] == limits.QosLimits("svcrec_qos", 3, 2, 10, None)
    assert qos["normal"] == limits.QosLimits("normal", None, None, None, None)


def test_a_users_association_inherits_max_submit_and_every_account_above_adds_its_grp_limit() -> None:
    assocs = limits.parse_assocs(recorded("sacctmgr_assoc.txt"))
    chain = limits.association_chain(assocs, "root", "svcrec_acct")
    assert [(a.account, a.user) for a in chain] == [
        ("svcrec_acct", "root"),
        ("svcrec_acct", ""),
        ("svcrec_parent", ""),
        ("root", ""),
    ]
    found = limits.SiteLimits(
        cluster="svcdev",
        user="root",
        account="svcrec_acct",
        default_qos="svcrec_qos",
        max_array_size=1001,
        max_job_count=10000,
        association=tuple(chain),
        qos=limits.parse_qos(recorded("sacctmgr_qos.txt")),
    )
    assert [limit.describe() for limit in found.submit_limits(None)] == [
        "MaxSubmitJobs 4 of association svcrec_acct/root",
        "GrpSubmitJobs 20 of account svcrec_parent",
        "MaxSubmitJobsPerUser 3 of QOS svcrec_qos",
        "GrpSubmitJobs 10 of QOS svcrec_qos",
        "MaxJobCount 10000 of the cluster",
    ]
    assert [limit.describe() for limit in found.run_limits("svcrec_qos")] == [
        "MaxJobs 2 of association svcrec_acct/root",
        "MaxJobsPerUser 2 of QOS svcrec_qos",
    ]
    assert [limit.describe() for limit in found.submit_limits("normal")][2:] == ["MaxJobCount 10000 of the cluster"]


def test_the_tightest_limit_binds_and_names_itself() -> None:
    found = site()
    qos_limits = [limits.Limit("MaxSubmitJobsPerUser", "QOS q", 3, per_qos=True), *found.submit_limits(None)]
    room = limits.headroom(qos_limits, limits.Counts(user=7, user_in_qos=3, cluster=40))
    assert room.room == 0
    assert room.reason() == "queued: MaxSubmitJobsPerUser 3 of QOS q reached (3 in queue)"
    assert limits.headroom(qos_limits, limits.Counts(user=7, user_in_qos=1, cluster=40)).room == 2
    assert limits.headroom([], limits.Counts(0, 0, 0)).room is None


def test_a_user_without_association_has_only_the_clusters_limits() -> None:
    found = site(user="nobody")
    assert found.association == ()
    assert [limit.name for limit in found.submit_limits(None)] == ["MaxJobCount"]


def test_unexpected_output_is_a_parse_error_naming_the_line() -> None:
    with pytest.raises(SlurmParseError, match="line 1"):
        limits.parse_qos("normal|x|||\n")
    with pytest.raises(SlurmParseError, match="expected 5"):
        limits.parse_qos("normal|1\n")


def test_a_refusal_for_a_submit_limit_is_told_from_other_failures() -> None:
    refused = recorded("sbatch_submit_limit.txt")
    assert limits.submit_limit_refusal(refused) == "QOSMaxSubmitJobPerUserLimit"
    policy = "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job submit limit, ...)"
    size_limit = f"sbatch: error: QOSMaxWallDurationPerJobLimit\n{policy}\n"
    assert limits.submit_limit_refusal(size_limit) is None
    assert limits.submit_limit_refusal("sbatch: error: AssocGrpSubmitJobsLimit\n") == "AssocGrpSubmitJobsLimit"
