import json

import pytest

from palaestra import registry, tasks
from palaestra.errors import EnvNotFound, TaskNotFound
from palaestra.tasks import Task

TASK = {
    "id": "t1",
    "family": "bench",
    "env": "palaestra-bench/Overhead-v0",
    "instruction": "Make the counter show 2",
    "setup": {"start": 0},
    "verifier": {"kind": "equals", "path": "count", "value": 2},
    "oracle": ["add(2)", "done()"],
}


def test_agent_view_omits_oracle_and_verifier():
    view = Task.model_validate(TASK).agent_view()
    assert "oracle" not in view and "verifier" not in view and "setup" not in view
    assert view["instruction"] == TASK["instruction"]


def test_suite_from_a_directory_of_json_and_yaml(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(TASK))
    (tmp_path / "b.yaml").write_text(
        "tasks:\n  - id: t2\n    family: bench\n    env: palaestra-bench/Overhead-v0\n"
        "    instruction: hi\n"
    )
    tasks.register_suite("tmp-suite", tmp_path, "from files")
    suite = tasks.get_suite("tmp-suite")
    assert [t.id for t in suite.tasks] == ["t1", "t2"]
    assert tasks.get_task("tmp-suite/t2").instruction == "hi"
    with pytest.raises(TaskNotFound):
        tasks.get_task("tmp-suite/nope")


def test_task_rejects_unknown_fields():
    with pytest.raises(ValueError):
        Task.model_validate({**TASK, "surprise": 1})


def test_python_loader_suite_and_unknown_suite():
    assert "palaestra-bench" in tasks.suite_names()
    assert tasks.get_task("palaestra-bench/count-to-3").oracle
    with pytest.raises(TaskNotFound):
        tasks.get_suite("no-such-suite")


def test_registry_is_lazy_and_suggests_close_matches():
    spec = registry.spec("palaestra-bench/Overhead-v0")
    assert spec.fixture and spec.entry_point.endswith(":OverheadEnv")
    with pytest.raises(EnvNotFound) as err:
        registry.spec("palaestra-bench/Overhed-v0")
    assert "palaestra-bench/Overhead-v0" in err.value.fields["close_matches"]


def test_env_ids_must_be_versioned():
    with pytest.raises(ValueError):
        registry.EnvSpec("nover", "x:y", family="x")
