"""A public name that is renamed or leaves the door keeps working until the API version that removes it: the old
name gives the same object, with one ``DeprecationWarning`` per process naming what to use and when it goes."""

from __future__ import annotations

import warnings

import pytest

import svc_host.plugin as api
from svc_host.plugin_core.deprecation import Deprecated, DeprecatedNames


@pytest.fixture
def renamed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The door as it would be after ``TransportSpec`` was renamed from ``TransportRecord`` and ``cap_paths`` left."""
    table = {
        "TransportRecord": Deprecated(new="TransportSpec", since="1.2", removed_in="2.0"),
        "cap_paths": Deprecated(new=None, since="1.2", removed_in="2.0", advice="cut the list yourself"),
    }
    monkeypatch.setattr(api, "_DEPRECATED", table)
    monkeypatch.setattr(api, "_OLD_NAMES", DeprecatedNames("svc_host.plugin", table))
    monkeypatch.delitem(vars(api), "cap_paths", raising=False)  # a name loaded before it was deprecated


def test_an_old_name_gives_the_new_object_and_warns_once(renamed: None) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # every warning given is recorded: the second use must give none
        old = api.TransportRecord
        again = api.TransportRecord
    assert old is again is api.TransportSpec
    assert [str(warning.message) for warning in caught] == [
        "svc_host.plugin.TransportRecord is deprecated since plugin API 1.2 and will be removed in plugin API 2.0: "
        "use svc_host.plugin.TransportSpec"
    ]
    assert caught[0].filename == __file__  # the warning points at the plugin's line, not at svc


def test_a_name_leaving_the_door_says_what_to_do(renamed: None) -> None:
    from svc_host.transports.sync_backend import cap_paths

    with pytest.warns(DeprecationWarning, match=r"svc_host\.plugin\.cap_paths is deprecated .*: cut the list yourself"):
        assert api.cap_paths is cap_paths
    from svc_host.plugin import cap_paths as imported  # `from ... import` passes the same way, warned already

    assert imported is cap_paths


def test_a_deprecated_name_is_an_error_under_W_error(renamed: None) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        with pytest.raises(DeprecationWarning):
            api.TransportRecord  # noqa: B018 - the access is the test


def test_deprecated_names_are_not_listed(renamed: None) -> None:
    assert "TransportRecord" not in dir(api)
    assert "TransportRecord" not in api.__all__


@pytest.mark.parametrize(
    ("old", "module", "name"),
    [
        ("open_ssh_connection", "svc_plugin_ssh.connect", "open_connection"),
        ("ssh_connect_options", "svc_plugin_ssh.options", "connect_options"),
    ],
)
def test_the_ssh_client_names_of_1_1_still_work_and_say_where_to_go(old: str, module: str, name: str) -> None:
    """1.2 deprecated them (a sync backend runs on the profile's transport); last month's backend keeps working."""
    import importlib

    table = api._DEPRECATED
    fresh = DeprecatedNames("svc_host.plugin", table)  # this test's own "once per process"
    with pytest.warns(
        DeprecationWarning, match=rf"svc_host\.plugin\.{old} is deprecated since plugin API 1\.2 .*2\.0: "
    ):
        value = fresh.resolve(old, api._load)
    assert value is getattr(importlib.import_module(module), name)
    assert old not in api.__all__
