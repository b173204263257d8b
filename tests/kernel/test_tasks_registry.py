import json

import pytest

from palaestra import registry, tasks
from palaestra.errors import EnvNotFound, InvalidRequest, TaskNotFound
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
    (tmp_path / "a.json").write_text(json.dumps({**TASK, "public": {"difficulty": "easy"}}))
    (tmp_path / "b.yaml").write_text(
        "tasks:\n  - id: t2\n    family: bench\n    env: palaestra-bench/Overhead-v0\n"
        "    instruction: hi\n    public: {}\n"
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


# ----- the task view: an allow-list, and files that must say what is public ---------------------
PRIVATE = {"kind": "infeasible", "grantable": False, "tags": ["infeasible"], "split": "test"}


def test_the_view_copies_only_allow_listed_fields_and_public_keys():
    task = Task.model_validate(
        {**TASK, "public": {"domain": "shop", "difficulty": "hard"}, "metadata": PRIVATE}
    )
    view = task.agent_view()
    assert (
        set(view)
        == set(tasks.AGENT_FIELDS)
        == {"id", "family", "env", "instruction", "max_steps", "metadata"}
    )
    assert view["metadata"] == {"domain": "shop", "difficulty": "hard"}
    text = json.dumps(view)
    for key in PRIVATE:
        assert key not in text
    # a key added to the private store tomorrow is not shown by default
    task.metadata["answer"] = "42"
    assert "answer" not in json.dumps(task.agent_view())


def test_a_task_file_without_the_public_split_names_the_task_and_the_field(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps({**TASK, "metadata": PRIVATE}))
    with pytest.raises(InvalidRequest, match=r"task 't1' has no 'public' field") as err:
        tasks.load_task_file(tmp_path / "a.json")
    assert err.value.fields == {"task": "t1", "field": "public"}
    # the file by its folder and name, never the server's absolute path (clients see this)
    assert str(err.value).startswith(f"{tmp_path.name}/a.json: ") and str(tmp_path) not in str(
        err.value
    )


def test_an_unknown_public_key_is_a_load_error_naming_task_and_field(tmp_path):
    (tmp_path / "a.yaml").write_text(
        "id: t9\nfamily: bench\nenv: palaestra-bench/Overhead-v0\ninstruction: hi\n"
        "public: {domain: shop, kind: infeasible}\n"
    )
    with pytest.raises(InvalidRequest, match=r"task 't9': public\.kind: .*public keys are") as err:
        tasks.load_task_file(tmp_path / "a.yaml")
    assert err.value.fields == {"task": "t9", "field": "public.kind"}
