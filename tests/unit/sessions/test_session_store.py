"""The ``interactive_session`` table on SQLite and PostgreSQL: a session recorded at submit, listed newest first,
moved by compare-and-set (two watchers of one store announce a transition once), stop requests and activity."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from svc_host.domain.times import as_utc
from svc_host.store import sessions as repo
from svc_host.store.database import Store

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def add(store: Store, job_id: str, *, cluster: str = "lab", when: datetime = T0) -> None:
    store.call(
        repo.add_session,
        cluster=cluster,
        job_id=job_id,
        kind="command",
        fields='{"command": "python3 -m http.server"}',
        source="web",
        session_dir=f"/home/u/.svc/sessions/{job_id}",
        start_timeout_seconds=300,
        time_limit_seconds=3600,
        now=when,
    )


def test_sessions_are_kept_by_cluster_and_id_and_listed_newest_first(database_url: str) -> None:
    store = Store(database_url)
    add(store, "7", cluster="a")
    add(store, "7", cluster="b", when=T0 + timedelta(minutes=1))  # one id on two clusters: two sessions
    add(store, "8", cluster="a", when=T0 + timedelta(minutes=2))
    assert [(row.cluster, row.job_id) for row in store.call(repo.list_sessions)] == [("a", "8"), ("b", "7"), ("a", "7")]
    assert [row.job_id for row in store.call(repo.list_sessions, "a")] == ["8", "7"]
    found = store.call(repo.find_session, "b", "7")
    assert found is not None
    assert (found.state, found.kind, as_utc(found.created_at)) == ("queued", "command", T0 + timedelta(minutes=1))
    assert store.call(repo.find_session, "c", "7") is None


def test_a_move_lands_once_and_ended_sessions_leave_the_open_list(database_url: str) -> None:
    store = Store(database_url)
    add(store, "7")
    add(store, "8")
    now = T0 + timedelta(minutes=5)
    changes = {"state": "starting", "started_at": now, "node_host": "n1", "node_port": 40001}
    assert store.call(repo.move, "lab", "7", expected="queued", changes=changes, now=now)
    assert not store.call(repo.move, "lab", "7", expected="queued", changes=changes, now=now)  # a second watcher
    ended = {"state": "ended", "end_reason": "app_exited", "end_detail": "Traceback", "ended_at": now}
    assert store.call(repo.move, "lab", "7", expected="starting", changes=ended, now=now)
    assert [row.job_id for row in store.call(repo.open_sessions)] == ["8"]
    row = store.call(repo.find_session, "lab", "7")
    assert row is not None
    assert (row.state, row.end_reason, row.end_detail, row.node_port) == ("ended", "app_exited", "Traceback", 40001)


def test_a_stop_request_and_activity_apply_to_open_sessions_only(database_url: str) -> None:
    store = Store(database_url)
    add(store, "7")
    add(store, "8")
    store.call(repo.move, "lab", "8", expected="queued", changes={"state": "ended"}, now=T0)
    store.call(repo.request_stop, "lab", "7", T0 + timedelta(minutes=1))
    store.call(repo.request_stop, "lab", "7", T0 + timedelta(minutes=2))  # the first request's time stays
    store.call(repo.request_stop, "lab", "8", T0 + timedelta(minutes=1))
    later, earlier = T0 + timedelta(minutes=9), T0 + timedelta(minutes=3)
    store.call(repo.note_activity, {("lab", "7"): later, ("lab", "8"): later})
    store.call(repo.note_activity, {("lab", "7"): earlier})  # never moves back
    seven, eight = store.call(repo.find_session, "lab", "7"), store.call(repo.find_session, "lab", "8")
    assert seven is not None
    assert eight is not None
    assert as_utc(seven.stop_requested_at) == T0 + timedelta(minutes=1)
    assert as_utc(seven.last_activity) == later
    assert (eight.stop_requested_at, eight.last_activity) == (None, None)
