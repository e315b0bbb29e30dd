"""Templates are bounded while they compile and while they render: size, nesting, tokens, work and CPU time.

The reviewer's reproductions (issue 26, N12 and N13): a 200 KB template that validated while it took the server
from 137 MB to 866 MB, a 1 MB file of templates that reached 3.6 GB and 22 s of CPU, and templates nested ~70 deep
or a 300-term sum that raised ``RecursionError``/``SyntaxError`` out of validation. Memory and CPU are measured
in a process of the test's own (``resource.getrusage`` of a child that runs one check), never by wall time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from svc_host.workflows import templating
from svc_host.workflows.load import check_workflow, load_workflow

MEASURE = """
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_CPU, (120, 120))  # a runaway check ends; the test then fails on no answer
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
from svc_host.workflows.load import check_workflow
check_workflow("name: warm\\nargs: {a: 1}\\njobs: [{name: a, command: '{{ a + 1 }}'}]\\n")
text = sys.stdin.read()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
cpu = time.process_time()
workflow, problems = check_workflow(text)
print(json.dumps({
    "valid": workflow is not None and not problems,
    "problems": problems,
    "grown_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024,
    "cpu_seconds": time.process_time() - cpu,
}))
"""


def measured(text: str) -> dict[str, Any]:
    """``check_workflow(text)`` in a fresh process: its answer, its peak RSS growth and its CPU seconds."""
    done = subprocess.run(
        [sys.executable, "-c", MEASURE], input=text, capture_output=True, text=True, check=False, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def one_job(template: str, args: str = "{a: 1, b: 2}") -> str:
    return f"name: t\nargs: {args}\njobs:\n  - name: j\n    command: {json.dumps(template)}\n"


def problems(text: str) -> list[str]:
    _, found = check_workflow(text)
    return found


def test_a_200_kb_template_is_refused_before_it_compiles() -> None:
    """N12: 200 KB of ``{{ a }}`` was ``valid`` after ~400 MB and seconds of CPU; now refused by its size."""
    template = "{{ a }}{% if b %}-{% endif %}" * (200_000 // 29)
    answer = measured(one_job(template))
    assert answer["valid"] is False
    assert answer["problems"] == [
        f"line 5: jobs[0].command: template refused: a template is at most 65536 characters; "
        f"this one has {len(template)}"
    ]
    assert answer["grown_mb"] < 50, answer
    assert answer["cpu_seconds"] < 5, answer


def test_a_1_mb_file_of_small_templates_is_bounded_in_all() -> None:
    """N12: many templates, each within the limits of one, add up to a budget for the whole workflow."""
    template = "{{ a }}" * 300
    jobs = "".join(f"  - name: j{i}\n    command: '{template} {i}'\n" for i in range(480))
    text = f"name: t\nargs: {{a: 1}}\njobs:\n{jobs}"
    assert len(text) > 1_000_000
    answer = measured(text)
    assert answer["valid"] is False
    refused = [p for p in answer["problems"] if "template refused" in p]
    assert len(refused) == 1, refused  # reported once; the templates after it are kept as written
    assert refused[0].endswith("template refused: the templates of the workflow hold more than 50000 tokens in all")
    assert answer["grown_mb"] < 100, answer
    assert answer["cpu_seconds"] < 10, answer


NESTED = [
    pytest.param("{{ " + "(" * 70 + "a" + ")" * 70 + " }}", "nested more than 20 levels", id="70-parentheses"),
    pytest.param("{{ " + "[" * 70 + "a" + "]" * 70 + " }}", "nested more than 20 levels", id="70-lists"),
    pytest.param("{% if a %}" * 70 + "x" + "{% endif %}" * 70, "nested more than 20 levels", id="70-ifs"),
    pytest.param("{{ " + " + ".join(["1"] * 300) + " }}", "nests more than 50 levels", id="300-term-sum"),
    pytest.param("{{ a" + "|string" * 300 + " }}", "nests more than 50 levels", id="300-filters"),
    pytest.param("{{ a" + ".b" * 300 + " }}", "nests more than 50 levels", id="300-lookups"),
    pytest.param("{{ " + "not " * 900 + "a }}", "nested more than 20 levels", id="900-nots"),
    pytest.param("{{ " + "-" * 900 + "a }}", "nested more than 20 levels", id="900-minus"),
    pytest.param("{{ " + "a if b else " * 300 + "a }}", "nests more than 50 levels", id="300-conditionals"),
]


@pytest.mark.parametrize(("template", "words"), NESTED)
def test_deep_templates_are_one_problem_in_words(template: str, words: str) -> None:
    """N13: these raised ``RecursionError``/``SyntaxError`` out of validation (a 500 on every face)."""
    found = problems(one_job(template))
    assert len(found) == 1, found
    assert found[0].startswith("line 5: jobs[0].command: template refused: "), found
    assert words in found[0], found


@pytest.mark.parametrize(
    ("template", "words"),
    [
        ("{{ a }}" * 2000, "more than 5000 tokens in one template"),
        ("{{ a\n}}{{ (((\n" + "(" * 30 + "a" + ")" * 33 + " }}", "at template line 3"),
    ],
    ids=["tokens", "where"],
)
def test_other_limits_of_one_template(template: str, words: str) -> None:
    found = problems(one_job(template))
    assert len(found) == 1, found
    assert words in found[0], found


@pytest.mark.parametrize("error", [RecursionError, SyntaxError, MemoryError])
def test_what_escapes_jinja_is_a_problem_in_words(monkeypatch: pytest.MonkeyPatch, error: type[Exception]) -> None:
    """The last net under the limits: a failure of Jinja's parser or Python's compiler is still one problem."""

    def fails(*args: object, **kwargs: object) -> None:
        raise error("too many nested parentheses")

    monkeypatch.setattr(templating.args_environment(), "parse", fails)
    found = problems(one_job("{{ a }}"))
    assert len(found) == 1, found
    assert found[0].startswith("line 5: jobs[0].command: template refused: "), found


def test_templates_at_the_limits_still_render() -> None:
    nested = "{{ " + "(" * 19 + "a + 1" + ")" * 19 + " }}"
    blocks = "{% if a %}" * 19 + "deep" + "{% endif %}" * 19
    long_sum = "{{ " + " + ".join(["1"] * 40) + " }}"
    big_text = "#" * 65_000 + "{{ a }}"
    for template, expected in ((nested, "2"), (blocks, "deep"), (long_sum, "40"), (big_text, "#" * 65_000 + "1")):
        assert load_workflow(one_job(template)).jobs[0].command == expected


def test_a_large_real_workflow_validates() -> None:
    """200 jobs with a few templates each are far inside every budget."""
    jobs = "".join(
        f"  - name: j{i}\n"
        f'    command: "python train.py --lr={{{{ lr * {i + 1} }}}} --out={{{{ out }}}}/{i} '
        f'{{% if big %}}--big{{% endif %}} --name={{{{ name | upper }}}}-{i}"\n'
        f'    resources: {{nodes: "{{{{ nodes }}}}", partition: "{{{{ partition | default(\'gpu\') }}}}"}}\n'
        + (f"    depends_on: [j{i - 1}]\n" if i else "")
        for i in range(200)
    )
    text = f"name: big\nargs: {{lr: 0.5, out: /scratch/run, big: true, name: exp, nodes: 2}}\njobs:\n{jobs}"
    workflow = load_workflow(text)
    assert len(workflow.jobs) == 200
    assert workflow.jobs[199].command == "python train.py --lr=100.0 --out=/scratch/run/199 --big --name=EXP-199"


def test_renders_share_a_budget_of_work_for_the_whole_workflow() -> None:
    """Each template builds 800,000 characters it throws away: within one render's bound, not 200 of them."""
    jobs = "".join(
        f"  - name: j{i}\n    command: \"{{{{ (y|replace('b', 'bb'))|length }}}} {i}\"\n" for i in range(200)
    )
    found = problems(f'name: t\nargs:\n  y: "{"b" * 400_000}"\njobs:\n{jobs}')
    assert len(found) == 1, found[:3]
    assert found[0].endswith(
        "template refused: the templates of the workflow build more than 16000000 characters in all while they render"
    )


@pytest.mark.parametrize("operation", ["max", "min", "trim", "basename", "dirname"])
def test_filters_that_read_their_whole_input_count_it(operation: str) -> None:
    jobs = "".join(f'  - name: j{i}\n    command: "{{{{ (y|{operation})|length }}}} {i}"\n' for i in range(100))
    found = problems(f'name: t\nargs:\n  y: "{"b" * 400_000}"\njobs:\n{jobs}')
    assert len(found) == 1, found[:3]
    assert "build more than 16000000 characters in all" in found[0]


def test_a_workflow_past_its_cpu_budget_is_refused_in_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """The last resort: thread CPU time, not wall time (a budget of none is spent by the first template)."""
    monkeypatch.setattr(templating, "TEMPLATE_CPU_SECONDS", 0.0)
    jobs = "".join(f'  - name: j{i}\n    command: "{{{{ a }}}} {i}"\n' for i in range(5))
    found = problems(f"name: t\nargs: {{a: 1}}\njobs:\n{jobs}")
    assert found == ["line 5: jobs[0].command: template refused: the templates of the workflow need more than "
                     "0.0 seconds of CPU time in all"]  # fmt: skip
