"""Benchmark: what workflow templates cost to check, with the limits of issue 26 (N12) and without them.

Each case runs in a fresh Python process of its own and prints the CPU seconds and the peak RSS growth of that
process while it checks (``resource.getrusage``), so other work on the machine does not count:

- the reviewer's 200 KB template (``{{ a }}{% if b %}-{% endif %}`` repeated) through ``check_workflow``: refused by
  the scan before Jinja parses it;
- the same template compiled by the sandbox directly, skipping svc's limits (what one validation cost before);
- a 1 MB file of 480 templates of 300 tags each: refused once the workflow's token budget is spent;
- a real-sized workflow (200 jobs, four templates each) through ``check_workflow``, and the scan alone over its
  templates: what the limits add to real use.

    python bench/template_bounds.py
"""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = """
import json, resource, sys, time
from svc_host.workflows import templating
from svc_host.workflows.load import check_workflow
check_workflow("name: warm\\nargs: {a: 1}\\njobs: [{name: a, command: '{{ a + 1 }}'}]\\n")
case, text = json.loads(sys.stdin.read())
if case == "scan":  # the strings are picked out before the clock starts: the scan alone is timed
    from svc_host.workflows.source import parse
    jobs = parse(text).data["jobs"]
    values = [v for job in jobs for v in (job["command"], *job["resources"].values())]
    strings = [v for v in values if isinstance(v, str) and ("{{" in v or "{%" in v)]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.process_time()
if case == "jinja":
    template = json.loads(text.split("command: ", 1)[1].split("\\n", 1)[0])
    templating.args_environment().from_string(template)
    outcome = "compiled"
elif case == "scan":
    tokens = sum(templating._scanned(s) for s in strings)
    outcome = f"{len(strings)} templates, {tokens} tokens"
else:
    workflow, problems = check_workflow(text)
    refused = [p.split("template refused: ", 1)[1] for p in problems if "template refused: " in p]
    outcome = f"refused: {refused[0]}" if refused else ("valid" if not problems else f"invalid: {problems[0]}")
print(json.dumps({
    "cpu": time.process_time() - started,
    "grown_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024,
    "outcome": outcome,
}))
"""


def big_template() -> str:
    piece = "{{ a }}{% if b %}-{% endif %}"
    template = piece * (200_000 // len(piece))
    return f"name: t\nargs: {{a: 1, b: 2}}\njobs:\n  - name: j\n    command: {json.dumps(template)}\n"


def megabyte_of_templates() -> str:
    template = "{{ a }}" * 300
    jobs = "".join(f"  - name: j{i}\n    command: '{template} {i}'\n" for i in range(480))
    return f"name: t\nargs: {{a: 1}}\njobs:\n{jobs}"


def real_workflow() -> str:
    jobs = "".join(
        f"  - name: j{i}\n"
        f'    command: "python train.py --lr={{{{ lr * {i + 1} }}}} --out={{{{ out }}}}/{i} '
        f'{{% if big %}}--big{{% endif %}} --name={{{{ name | upper }}}}-{i}"\n'
        f"    resources: {{nodes: {json.dumps('{{ nodes }}')}, partition: {json.dumps('{{ partition }}')}}}\n"
        + (f"    depends_on: [j{i - 1}]\n" if i else "")
        for i in range(200)
    )
    args = "{lr: 0.5, out: /scratch/run, big: true, name: exp, nodes: 2, partition: gpu}"
    return f"name: big\nargs: {args}\njobs:\n{jobs}"


def measure(case: str, text: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], input=json.dumps([case, text]), capture_output=True, text=True, check=True
    )
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def main() -> None:
    cases = [
        ("200 KB template, check_workflow (scan refuses)", "check", big_template()),
        ("200 KB template, Jinja sandbox alone (no limits)", "jinja", big_template()),
        ("1 MB file of 480 templates x 300 tags", "check", megabyte_of_templates()),
        ("200-job workflow, check_workflow", "check", real_workflow()),
        ("200-job workflow, the scan alone", "scan", real_workflow()),
    ]
    print(f"{'case':<52} {'CPU s':>7} {'peak RSS +MB':>13}  outcome")
    for title, case, text in cases:
        answer = measure(case, text)
        print(f"{title:<52} {answer['cpu']:>7.3f} {answer['grown_mb']:>13.1f}  {answer['outcome']}")


if __name__ == "__main__":
    main()
