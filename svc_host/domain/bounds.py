"""Bounds on the integers a client sends, shared by every face (REST parameters, MCP tool arguments).

Nothing a client sends can overflow SQLite's 64-bit integers, a file offset or a JavaScript number.
"""

from __future__ import annotations

MAX_SAFE_INTEGER = 2**53 - 1
"""The largest integer a JSON client (the dashboard's JavaScript) reads exactly; far below SQLite's 2**63."""
MAX_ROW_ID = MAX_SAFE_INTEGER
"""Store row ids (sweep ids, history ids)."""
MAX_OFFSET = MAX_SAFE_INTEGER
"""Byte and row offsets."""
MAX_JOB_ID = 2**32 - 1
"""Slurm job ids are unsigned 32-bit (a federation's ids included)."""
