"""Loading a workflow: every problem at once, each with its location; args rendered in a sandbox."""

from __future__ import annotations

import pytest

from svc_host.errors import WorkflowError
from svc_host.workflows.load import MAX_WORKFLOW_BYTES, check_workflow, load_workflow

GOOD = """\
name: train-eval
args:
  lr: 0.001
  data: /data/set
default_project: proj
jobs:
  - name: prep
    command: "python prep.py --data {{ data }}"
  - name: train
    command: [python, train.py, "--lr={{ lr }}"]
    depends_on: [prep]
    retry: 2
    retry_delay: 5
    resources: {nodes: 2, gpus_per_node: 4, partition: gpu, time_limit: "4:00:00"}
    environment: {conda: torch, env_vars: {SEED: "{{ seed | default(7) }}"}}
  - name: cleanup
    script_path: cleanup.sh
    depends_on: ["afternotok:train"]
"""


def problems(text: str, **kwargs: object) -> list[str]:
    _, found = check_workflow(text, **kwargs)  # type: ignore[arg-type]
    return found


def test_a_good_workflow_loads_with_args_rendered() -> None:
    workflow = load_workflow(GOOD)
    assert workflow.name == "train-eval"
    assert workflow.default_project == "proj"
    assert workflow.job("prep").command == "python prep.py --data /data/set"
    train = workflow.job("train")
    assert train.command == ["python", "train.py", "--lr=0.001"]
    assert train.environment.env_vars == {"SEED": "7"}
    assert train.resources.model_fields_set == {"nodes", "gpus_per_node", "partition", "time_limit"}
    assert [str(d) for d in workflow.job("cleanup").dependencies] == ["afternotok:train"]
    assert [str(d) for d in train.dependencies] == ["afterok:prep"]


def test_call_args_are_laid_over_the_files() -> None:
    workflow = load_workflow(GOOD, args={"lr": 0.1, "seed": 3})
    assert workflow.job("train").command == ["python", "train.py", "--lr=0.1"]
    assert workflow.job("train").environment.env_vars == {"SEED": "3"}
    assert workflow.args == {"lr": 0.1, "data": "/data/set", "seed": 3}


def test_every_problem_is_reported_at_once_with_its_line() -> None:
    text = """\
name: broken
jobs:
  - name: a
    command: echo {{ missing }}
  - name: b
    command: [echo]
    depends_on: [a, "afterfoo:a", ghost]
    retry: many
  - name: a
    command: x
    bogus: 1
  - name: c
    script_path: c.sh
    command: y
  - name: bad name
    command: z
"""
    assert problems(text) == [
        "line 4: jobs[0].command: template error: 'missing' is undefined",
        "line 7: jobs[1].depends_on: unknown dependency type 'afterfoo' in 'afterfoo:a'; use one of: "
        "afterok, after, afterany, afternotok",
        "line 8: jobs[1].retry: Input should be a valid integer, unable to parse string as an integer",
        "line 11: jobs[2].bogus: Extra inputs are not permitted",
        "line 12: jobs[3]: give 'command' or 'script_path', not both",
        "line 15: jobs[4].name: String should match pattern '^[A-Za-z0-9_-]{1,64}$'",
        "line 9: jobs[2].name: duplicate job name 'a' (first defined at jobs[0])",
        "line 7: jobs[1].depends_on[2]: job 'b' depends on unknown job 'ghost'",
    ]


def test_the_error_message_counts_and_joins_the_problems() -> None:
    with pytest.raises(WorkflowError) as caught:
        load_workflow("name: x\njobs:\n  - {name: a, command: x}\n  - {name: a, command: y}\n  - {name: b}\n")
    assert caught.value.problems == [
        "line 5: jobs[2]: give 'command' (a regular job) or 'script_path' (a shell job)",
        "line 4: jobs[1].name: duplicate job name 'a' (first defined at jobs[0])",
    ]
    assert str(caught.value).startswith("workflow has 2 problems: line 5: jobs[2]: give")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: [x\n", "line 2, column 1: YAML syntax error: while parsing a flow sequence expected ',' or ']'"),
        ("", "the workflow must be a mapping with 'name' and 'jobs', not empty"),
        ("- a\n- b\n", "the workflow must be a mapping with 'name' and 'jobs', not a list"),
        ("name: x\n", "name: x"),
    ],
)
def test_shape_and_syntax(text: str, expected: str) -> None:
    found = problems(text)
    if expected == "name: x":
        assert found == ["line 1: jobs: Field required"]
    else:
        assert found[0].startswith(expected)


def test_duplicate_keys_are_problems_not_silently_overwritten() -> None:
    assert problems("name: x\njobs:\n  - name: a\n    command: x\n    command: y\n") == [
        "line 5: jobs[0].command: duplicate key 'command'"
    ]


def test_cycles_are_named() -> None:
    text = """\
name: cyc
jobs:
  - {name: a, command: x, depends_on: [c]}
  - {name: b, command: x, depends_on: [a]}
  - {name: c, command: x, depends_on: ["afterany:b"]}
  - {name: d, command: x, depends_on: [d]}
  - {name: e, command: x}
"""
    assert problems(text) == ["jobs: dependency cycle: a -> b -> c -> a", "jobs: dependency cycle: d -> d"]


def test_python_prefix_is_rejected_anywhere_in_args_with_the_spec_message() -> None:
    text = """\
name: p
args:
  lr: "python:__import__('os').system('id')"
  nested: {deep: [1, " Python:eval('1')"]}
jobs:
  - {name: a, command: "echo {{ lr }}"}
"""
    assert problems(text, args={"extra": {"x": "python:1+1"}}) == [
        "args at 'lr' contains 'python:' prefix which is not allowed: 'python:__import__('os').system('id')'",
        "args at 'nested.deep[1]' contains 'python:' prefix which is not allowed: ' Python:eval('1')'",
        "args at 'extra.x' contains 'python:' prefix which is not allowed: 'python:1+1'",
    ]


def test_a_single_python_problem_is_the_whole_message() -> None:
    with pytest.raises(
        WorkflowError, match=r"^args at 'x' contains 'python:' prefix which is not allowed: 'python:1'$"
    ):
        load_workflow("name: p\njobs: [{name: a, command: x}]\n", args={"x": "python:1"})


@pytest.mark.parametrize(
    ("template", "reason"),
    [
        ("{{ ''.__class__ }}", "attribute '__class__' is not allowed"),
        ("{{ x.__class__.__mro__[1].__subclasses__() }}", "is not allowed"),
        ("{{ x['__class__'] }}", "refused by the sandbox"),
        ("{{ cycler.__init__.__globals__ }}", "is not allowed"),
        ("{{ range(10) }}", "call is not allowed"),
        ("{{ lipsum }}", "'lipsum' is undefined"),
        ("{% for i in x %}{{ i }}{% endfor %}", "for is not allowed"),
        ("{{ 'a' * 100000000 }}", "'*' is only for numbers"),
        ("{{ 2 ** 1000000 }}", "pow is not allowed"),
        ("{{ '%0999999d' % 1 }}", "'%' is only for numbers"),
        ("{{ x | center(100000000) }}", "filter 'center' is not allowed"),
        ("{% macro m() %}{{ m() }}{% endmacro %}", "macro is not allowed"),
    ],
)
def test_templates_cannot_escape_the_sandbox_or_blow_up(template: str, reason: str) -> None:
    found = problems(f'name: s\nargs: {{x: abc}}\njobs:\n  - name: a\n    command: "{template}"\n')
    assert len(found) == 1
    assert found[0].startswith("line 5: jobs[0].command: template")
    assert reason in found[0]


def test_templates_can_substitute_and_use_simple_logic() -> None:
    text = """\
name: ok
args: {n: 4, path: /a/b/c.txt, big: true}
jobs:
  - name: a
    command: "echo {{ n * 2 }} {{ path | basename }} {% if big %}large{% else %}small{% endif %}"
    resources: {nodes: "{{ n }}"}
"""
    job = load_workflow(text).jobs[0]
    assert job.command == "echo 8 c.txt large"
    assert job.resources.nodes == 4


def test_args_names_must_be_identifiers() -> None:
    assert problems("name: a\nargs: {'bad-name': 1}\njobs: [{name: a, command: x}]\n") == [
        "args: names must be identifiers usable in templates: 'bad-name'"
    ]


def test_size_limit() -> None:
    assert problems("#" * (MAX_WORKFLOW_BYTES + 1)) == [f"the workflow is larger than {MAX_WORKFLOW_BYTES} bytes"]


def test_alias_bombs_are_refused_before_expansion() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    found = problems("\n".join(lines) + "\nname: n\njobs: *a8\n")
    assert found == ["the document expands to more than 200000 nodes (aliases?); simplify it"]


def test_yaml_dates_become_strings_so_args_stay_json() -> None:
    workflow = load_workflow("name: d\nargs: {day: 2024-01-02}\njobs: [{name: a, command: 'echo {{ day }}'}]\n")
    assert workflow.args == {"day": "2024-01-02"}
    assert workflow.jobs[0].command == "echo 2024-01-02"
