"""Suites found through PALAESTRA_SUITE_PATH: lazily, and again when a name is unknown."""

import json
import os

import pytest

from palaestra import tasks
from palaestra.errors import TaskNotFound

TASK = {
    "id": "t1",
    "family": "bench",
    "env": "palaestra-bench/Overhead-v0",
    "instruction": "Make the counter show 2",
    "verifier": {"kind": "equals", "path": "count", "value": 2},
    "oracle": ["add(2)", "done()"],
    "public": {},
}


def _write_suite(folder, name, *task_ids, description="on disk"):
    (folder / "tasks").mkdir(parents=True, exist_ok=True)
    (folder / "suite.json").write_text(json.dumps({"name": name, "description": description}))
    for tid in task_ids:
        (folder / "tasks" / f"{tid}.json").write_text(json.dumps({**TASK, "id": tid}))
    # not a task file: only tasks/ is read
    (folder / "report.json").write_text(json.dumps({"generated": len(task_ids)}))


@pytest.fixture
def suite_path(tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    monkeypatch.setenv(tasks.SUITE_PATH_VAR, os.pathsep.join([str(a), str(b)]))
    return a, b


def test_suites_on_the_path_are_listed_and_loaded(suite_path):
    a, _ = suite_path
    _write_suite(a / "folder-name-does-not-matter", "disk-one", "t1", "t2")
    assert "disk-one" in tasks.suite_names()
    suite = tasks.get_suite("disk-one")
    assert [t.id for t in suite.tasks] == ["t1", "t2"] and suite.description == "on disk"
    assert tasks.get_task("disk-one/t2").oracle.data == ["add(2)", "done()"]


def test_a_suite_written_after_start_is_found_at_once(suite_path):
    _, b = suite_path
    with pytest.raises(TaskNotFound):
        tasks.get_suite("late")
    _write_suite(b / "late", "late", "t1")
    assert tasks.get_task("late/t1").id == "t1"  # the unknown name made it scan again


def test_a_rewritten_suite_is_read_again(suite_path):
    a, _ = suite_path
    _write_suite(a / "grow", "grow", "t1")
    assert len(tasks.get_suite("grow").tasks) == 1
    _write_suite(a / "grow", "grow", "t2")
    os.utime(a / "grow" / "tasks", ns=(1, 1))  # mtime granularity must not hide the change
    assert {t.id for t in tasks.get_suite("grow").tasks} == {"t1", "t2"}


def test_hidden_broken_and_foreign_folders_are_skipped(suite_path):
    a, _ = suite_path
    _write_suite(a / ".half.partial", "half", "t1")
    (a / "not-a-suite").mkdir()
    (a / "torn").mkdir()
    (a / "torn" / "suite.json").write_text("{not json")
    (a / "a-file.txt").write_text("hello")
    names = tasks.suite_names()
    assert "half" not in names and "not-a-suite" not in names and "torn" not in names


def test_first_folder_wins_and_registered_suites_beat_the_path(suite_path):
    a, b = suite_path
    _write_suite(a / "x", "twice", "from-a")
    _write_suite(b / "x", "twice", "from-b")
    assert [t.id for t in tasks.get_suite("twice").tasks] == ["from-a"]
    _write_suite(a / "bench", "palaestra-bench", "impostor")
    assert "impostor" not in {t.id for t in tasks.get_suite("palaestra-bench").tasks}


def test_a_suite_leaves_with_its_folder_or_its_path_entry(suite_path, monkeypatch):
    a, _ = suite_path
    _write_suite(a / "gone", "gone", "t1")
    assert tasks.get_suite("gone")
    monkeypatch.setenv(tasks.SUITE_PATH_VAR, "")
    with pytest.raises(TaskNotFound):
        tasks.get_suite("gone")
    assert "gone" not in tasks.suite_names()


def test_missing_path_entries_are_not_errors(tmp_path, monkeypatch):
    monkeypatch.setenv(tasks.SUITE_PATH_VAR, os.pathsep.join(["", str(tmp_path / "nope")]))
    assert "palaestra-bench" in tasks.suite_names()


def test_add_suite_path_appends_once(tmp_path, monkeypatch):
    monkeypatch.setenv(tasks.SUITE_PATH_VAR, "/first")
    tasks.add_suite_path(tmp_path)
    tasks.add_suite_path(tmp_path)
    assert os.environ[tasks.SUITE_PATH_VAR] == os.pathsep.join(["/first", str(tmp_path)])
    monkeypatch.delenv(tasks.SUITE_PATH_VAR)
    tasks.add_suite_path(tmp_path)
    assert os.environ[tasks.SUITE_PATH_VAR] == str(tmp_path)
