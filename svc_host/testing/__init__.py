"""Test support for svc and for plugin authors: fixtures, contract suites and a fake transport.

Installed as a pytest plugin (entry point ``pytest11: svc``, fixtures in ``svc_host.testing.plugin``).
Subclass ``svc_host.testing.contract.TransportContract`` in your plugin's tests to prove your transport
behaves like svc's own; ``svc_host.testing.fake.FakeTransport`` serves fast unit tests of the host.
"""
