"""The AndroidWorld replica suites (``envs/mobile/suites.py``, made by
``palaestra.synthesis.androidworld``): what their records are keyed by, the maker's incremental
runs, the loader's errors, the committed suite (it loads, every task validated under today's
keys, ids and public metadata as promised, what the generator makes today) and one of its tasks
played through the gateway, by RemoteEnv and by ``palaestra eval``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from palaestra.envs.mobile import suites
from palaestra.errors import InvalidRequest
from palaestra.family import family
from palaestra.synth_apps.generate import UNLESS
from palaestra.synth_apps.spec import load_spec, replica_names
from palaestra.synthesis import androidworld as maker
from palaestra.tasks import Task, get_suite
from palaestra.validation import code_digest, code_sources
from palaestra.verifiers.validation import ValidationReport

TINY = Path(__file__).with_name("data") / "aw_tiny.yaml"
REPLICAS = Path(suites.spec_file(replica_names()[0])).parent


def task_on(app: str, plant: list[dict] | None = None) -> Task:
    setup = {"driver": "synth", "app": app, **({"plant": plant} if plant else {})}
    return Task(id="T/0", family="mobile", env="palaestra/mobile-v0", instruction="x", setup=setup)


def edited(monkeypatch: pytest.MonkeyPatch, target: Path) -> None:
    """``target`` reads as if one line were added to it."""
    real = Path.read_bytes

    def read(self: Path) -> bytes:
        data = real(self)
        return data + b"\n# an edit\n" if self.resolve() == target.resolve() else data

    monkeypatch.setattr(Path, "read_bytes", read)


# ----- keys ---------------------------------------------------------------------------------


def test_a_replica_yaml_is_task_data_not_the_familys_code(monkeypatch):
    """Editing one replica app's YAML moves the keys of the tasks using it (its own and those
    planting rows in it), not the mobile code digest (the phone record) nor other apps' keys."""
    assert not [n for n in code_sources("mobile") if "/replicas/" in n]
    first, second = sorted(REPLICAS.glob("*.yaml"))[:2]
    own, planting, other = (
        task_on(first.stem),
        task_on(second.stem, [{"app": first.stem, "entity": "x", "values": {}}]),
        task_on(second.stem),
    )
    before = [code_digest("mobile"), *(suites.replica_key(t) for t in (own, planting, other))]
    edited(monkeypatch, first)
    after = [code_digest("mobile"), *(suites.replica_key(t) for t in (own, planting, other))]
    assert after[0] == before[0] and after[3] == before[3]
    assert after[1] != before[1] and after[2] != before[2]


# ----- the maker ----------------------------------------------------------------------------


class FakeEnvs:
    """The maker's env pool without a browser (the validation is faked too)."""

    def __init__(self, family: str) -> None:
        pass

    def get(self) -> None:
        return None

    def close(self) -> None:
        pass


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """The tiny replica as a spec file of its own, and the validations the maker asks for
    (faked: the ask variants fail, the others pass)."""
    path = tmp_path / "aw_tiny.yaml"
    shutil.copy(TINY, path)
    played: list[str] = []

    def validate(task, *, env, mutations):
        played.append(task.id)
        ok = not task.id.endswith("-ask")
        return ValidationReport(
            validated=ok, reason=None if ok else "oracle run 1 failed", seconds=2
        )

    monkeypatch.setattr(maker, "validate_task", validate)
    monkeypatch.setattr(maker, "EnvPool", FakeEnvs)
    return path, played


def test_the_maker_validates_once_and_keeps_verdicts_while_nothing_changes(
    tiny, tmp_path, monkeypatch
):
    path, played = tiny
    out = tmp_path / "suite.json"
    made = maker.build(specs={str(path): load_spec(path)}, seeds=2, out=out)
    # TinyNoteBody/1 asks about the note seed 0 asks about (in other words): a repeat, never
    # played (see the next test)
    ids = {"TinyAddNote/0", "TinyAddNote/1", "TinyNoteBody/0"}
    asks = {"TinyAddNote/0-ask", "TinyAddNote/1-ask"}
    assert sorted(played) == sorted(ids | asks)
    seeds = [int(tid.rpartition("/")[2].removesuffix("-ask")) for tid in played]
    assert seeds == sorted(seeds)  # breadth first: every template's seed 0 before any seed 1
    assert {t["id"] for t in made["tasks"]} == ids
    assert {d["task"] for d in made["drops"]} == asks | {"TinyNoteBody/1"}
    assert all(d["reason"] == "oracle run 1 failed" for d in made["drops"] if d["task"] in asks)
    assert made["report"]["validated"] == 3 and made["report"]["validated_per_minute"] == 18.0
    # the file loads as a suite: the real app name and the template are public
    loaded = suites.load_replicas(
        out, "t", templates={"TinyAddNote": "aw_tiny", "TinyNoteBody": "aw_tiny"}
    )
    assert {t.id for t in loaded.tasks} == ids
    task = loaded.get("TinyAddNote/0")
    assert task.public.app == "Tiny Notes" and task.public.domain == "TinyAddNote"
    assert task.family == "mobile" and task.validation["key"] == suites.replica_key(task)

    played.clear()
    again = maker.build(specs={str(path): load_spec(path)}, seeds=2, out=out)
    assert played == [] and again["tasks"] == made["tasks"] and again["drops"] == made["drops"]

    maker.build(specs={str(path): load_spec(path)}, seeds=2, out=out, retry_drops=True)
    assert sorted(played) == sorted(asks)  # only the dropped ones are played again
    played.clear()

    # a spec edit re-validates its tasks; so does new code
    path.write_text(path.read_text() + "\n# an edit\n")
    maker.build(specs={str(path): load_spec(path)}, seeds=2, out=out)
    assert sorted(played) == sorted(ids | asks)
    played.clear()
    monkeypatch.setattr(maker, "code_digest", lambda family: "new code")
    maker.build(specs={str(path): load_spec(path)}, seeds=2, out=out)
    assert sorted(played) == sorted(ids | asks)


def test_the_maker_keeps_other_apps_entries(tiny, tmp_path):
    path, _ = tiny
    out = tmp_path / "suite.json"
    other = {
        "id": "OtherTemplate/0",
        "metadata": {"app": "other", "aw_template": "X"},
        "validation": {"seconds": 3.0},
    }
    out.write_text(json.dumps({"tasks": [other], "drops": [{"task": "Y/0", "app": "other"}]}))
    made = maker.build(specs={str(path): load_spec(path)}, seeds=1, out=out)
    assert other in made["tasks"] and {"task": "Y/0", "app": "other"} in made["drops"]


def test_an_interrupted_run_keeps_what_it_validated(tiny, tmp_path, monkeypatch):
    path, played = tiny
    fake = maker.validate_task

    def stop_at_the_third(task, **kw):
        if len(played) == 2:
            raise KeyboardInterrupt
        return fake(task, **kw)

    monkeypatch.setattr(maker, "validate_task", stop_at_the_third)
    out = tmp_path / "suite.json"
    with pytest.raises(KeyboardInterrupt):
        maker.build(specs={str(path): load_spec(path)}, seeds=2, out=out)
    kept = json.loads(out.read_text())
    assert len(kept["tasks"]) + len(kept["drops"]) == 3  # two verdicts and the repeat
    assert len(played) == 2
    played.clear()
    monkeypatch.setattr(maker, "validate_task", fake)
    maker.build(specs={str(path): load_spec(path)}, seeds=2, out=out)
    assert len(played) == 3  # the two verdicts kept are not played again


def test_a_seed_repeating_an_earlier_task_or_answer_adds_no_task():
    """A parameterless template's seeds are one task; a question whose answer an earlier seed
    had is guessable from the template (a constant answer would collect it): both are drops.
    Yes/no answers must repeat (and are gated on a look instead); ask variants are compared
    with ask variants only."""
    from palaestra.synth_apps.generate import Generated
    from palaestra.tasks import Oracle

    def made(tid: str, instruction: str, said: str) -> Generated:
        task = task_on("tasks").model_copy(update={"id": tid, "instruction": instruction})
        task.oracle = Oracle(policy="plan", data=[{"op": "say", "text": said}, {"op": "done"}])
        return Generated(task)

    earlier: dict = {}
    assert maker.repeats(made("T/0", "How many on Monday?", "3"), False, earlier) == ""
    again = maker.repeats(made("T/1", "How many on Friday?", "3"), False, earlier)
    assert again.startswith("answers '3' as T/0")
    assert maker.repeats(made("T/2", "How many on Monday?", "3"), False, earlier).startswith(
        "the same task as T/0"
    )
    assert maker.repeats(made("T/3", "How many on Sunday?", "4"), False, earlier) == ""
    assert maker.repeats(made("T/0-ask", "How many? Ask me the day.", "3"), True, earlier) == ""
    assert maker.repeats(made("B/0", "Is it done?", "Yes"), False, {}) == ""
    yes: dict = {}
    maker.repeats(made("B/0", "Is A done?", "Yes"), False, yes)
    assert maker.repeats(made("B/1", "Is B done?", "Yes"), False, yes) == ""


def test_an_llm_endpoint_adds_reworded_twins_whose_wording_the_file_keeps(tiny, tmp_path):
    """With an endpoint, each seed's task gets a validated ``-llm`` twin in the model's words
    (not the ask variants; not where the model drops a grounded value). The file keeps the
    wording: a later run without the endpoint keeps the twin, and a spec edit validates the same
    wording again instead of asking the model anew."""
    from palaestra.synth_apps.llm import LLMAuthor
    from tests.llm_stub import Stub

    def reword(messages):
        request = messages[-1]["content"].split("\n")[0].removeprefix("Reword: ")
        if "text of the note" in request:  # TinyNoteBody's question
            return "Do the thing."  # drops every value: no twin
        return f"Please, if you can: {request}"

    path, played = tiny
    out = tmp_path / "suite.json"
    stub = Stub(reword)
    try:
        made = maker.build(
            specs={str(path): load_spec(path)}, seeds=1, out=out, author=LLMAuthor(stub.url)
        )
    finally:
        stub.close()
    asked = len(stub.requests)
    assert asked == 2  # TinyAddNote/0 and TinyNoteBody/0; never the ask variant
    twin = next(t for t in made["tasks"] if t["id"] == "TinyAddNote/0-llm")
    plain = next(t for t in made["tasks"] if t["id"] == "TinyAddNote/0")
    assert twin["instruction"].startswith("Please, if you can: ")
    assert twin["instruction"].endswith(UNLESS) and twin["instruction"].count(UNLESS) == 1
    assert twin["metadata"]["wording"] == "llm" and twin["verifier"] == plain["verifier"]
    assert "TinyAddNote/0-llm" in played and "TinyNoteBody/0-llm" not in played
    assert made["report"]["reworded"] == 1

    played.clear()
    again = maker.build(specs={str(path): load_spec(path)}, seeds=1, out=out)  # no endpoint
    assert played == [] and twin in again["tasks"]
    path.write_text(path.read_text() + "\n# an edit\n")
    again = maker.build(specs={str(path): load_spec(path)}, seeds=1, out=out)
    assert "TinyAddNote/0-llm" in played
    kept = next(t for t in again["tasks"] if t["id"] == "TinyAddNote/0-llm")
    assert kept["instruction"] == twin["instruction"]


def test_an_unreachable_llm_endpoint_stops_the_maker_before_anything_is_written(
    tmp_path, monkeypatch, capsys
):
    out = tmp_path / "suite.json"
    monkeypatch.setitem(suites.REPLICA_FILES, suites.REPLICA, out)
    with pytest.raises(SystemExit) as stopped:
        maker.main(["--apps", "joplin", "--llm-url", "http://127.0.0.1:9/v1"])
    assert "127.0.0.1:9" in str(stopped.value) and "unreachable" in str(stopped.value)
    assert not out.exists()


def test_the_web_suite_holds_only_web_apps_in_their_desktop_layout(tiny, tmp_path):
    path, played = tiny
    made = maker.build(
        specs={str(path): load_spec(path)}, seeds=1, layout=maker.WEB, out=tmp_path / "w.json"
    )
    assert made["suite"] == suites.REPLICA_WEB and made["tasks"]
    for task in made["tasks"]:
        assert task["family"] == "web" and task["env"] == "palaestra/web-v0"
        assert task["setup"]["layout"] == "desktop"
    played.clear()
    path.write_text(path.read_text().replace("web: true", "web: false"))
    made = maker.build(
        specs={str(path): load_spec(path)}, seeds=1, layout=maker.WEB, out=tmp_path / "w2.json"
    )
    assert made["tasks"] == [] and played == []


def test_a_task_spanning_two_apps_or_ending_in_another_app_is_not_a_web_task():
    from palaestra.synth_apps.spec import PlantSpec

    spec = load_spec(TINY)
    template = spec.tasks[0]
    assert maker.on_the_web(spec, template)
    assert maker.on_the_web(spec, template.model_copy(update={"plant": [PlantSpec(entity="note")]}))
    elsewhere = [PlantSpec(app="markor", entity="note")]
    assert not maker.on_the_web(spec, template.model_copy(update={"plant": elsewhere}))
    assert not maker.on_the_web(spec, template.model_copy(update={"end_in": "markor"}))


def test_a_template_that_cannot_be_grounded_is_a_drop_naming_it(tiny, tmp_path):
    path, _ = tiny
    text = path.read_text().replace(
        "kind: info\n    entity: note",
        "kind: info\n    pick: \"record.title == 'nope'\"\n    entity: note",
    )
    path.write_text(text)
    made = maker.build(specs={str(path): load_spec(path)}, seeds=1, out=tmp_path / "s.json")
    drop = next(d for d in made["drops"] if d["task"] == "TinyNoteBody/0")
    assert drop["reason"].startswith("cannot generate") and "TinyNoteBody" in drop["reason"]


@pytest.mark.browser
def test_the_maker_validates_on_the_real_phone(tmp_path):
    """No fakes: the tiny replica's tasks validated on the embedded phone (oracle three times,
    noop, mutants, adversaries, search); the ask variant's user knows the hidden text."""
    out = tmp_path / "suite.json"
    made = maker.build(specs={str(TINY): load_spec(TINY)}, seeds=1, out=out)
    entries = {t["id"]: t for t in made["tasks"]} | {d["task"]: d for d in made["drops"]}
    assert set(entries) == {"TinyAddNote/0", "TinyAddNote/0-ask", "TinyNoteBody/0"}
    task = next(t for t in made["tasks"] if t["id"] == "TinyAddNote/0")
    assert task["validation"]["oracle_scores"] == [1.0, 1.0, 1.0]
    assert task["validation"]["noop_score"] == 0.0 and task["validation"]["adversaries"]
    asked = entries["TinyAddNote/0-ask"]
    assert asked.get("validation", {}).get("validated"), asked
    body = next(iter(asked["setup"]["user"].values()))
    assert body not in asked["instruction"] and body in task["instruction"]


def test_the_check_looks_twice_and_fails_on_a_moved_verdict(tiny, tmp_path, monkeypatch):
    """``--check N`` (make revalidate): N committed tasks validated again; a task failing
    once is looked at again, one failing twice fails the check."""
    path, _ = tiny
    out = tmp_path / "suite.json"
    maker.build(specs={str(path): load_spec(path)}, seeds=2, out=out)
    monkeypatch.setitem(suites.REPLICA_FILES, suites.REPLICA, out)
    monkeypatch.setattr(
        suites, "replica_templates", lambda: {"TinyAddNote": "x", "TinyNoteBody": "x"}
    )
    calls: list[list[str]] = []

    def revalidate(tasks, fail_twice):
        calls.append([t.id for t in tasks])
        return [f"{tasks[0].id}: no longer validates (x)"] if len(calls) == 1 or fail_twice else []

    from palaestra import validation

    for fail_twice, code in ((False, 0), (True, 1)):
        calls.clear()
        monkeypatch.setattr(
            validation, "revalidate_committed", lambda t, twice=fail_twice: revalidate(t, twice)
        )
        assert maker.main(["--check", "3"]) == code
        assert len(calls[0]) == 3 and len(calls) == 2 and len(calls[1]) == 1
    monkeypatch.setitem(suites.REPLICA_FILES, suites.REPLICA, tmp_path / "never-made.json")
    assert maker.main(["--check", "3"]) == 1  # an empty record is no pass


# ----- the loader ---------------------------------------------------------------------------


def test_an_unknown_template_in_a_suite_file_is_a_load_error_naming_it(tmp_path):
    task = task_on(str(TINY)).model_copy(
        update={
            "metadata": {"aw_template": "SimpleCalendarTeleport"},
            "id": "SimpleCalendarTeleport/0",
        }
    )
    out = tmp_path / "suite.json"
    out.write_text(json.dumps({"tasks": [task.model_dump(mode="json")]}))
    with pytest.raises(InvalidRequest, match="SimpleCalendarTeleport") as caught:
        suites.load_replicas(out, "t", templates={"SimpleCalendarAddOneEvent": "simple_calendar"})
    assert "did you mean 'SimpleCalendarAddOneEvent'" in str(caught.value)
    with pytest.raises(InvalidRequest, match="SimpleCalendarTeleport"):
        suites.load_replicas(out, "t")  # the shipped replicas' templates


def test_a_task_whose_spec_changed_is_left_out(tmp_path):
    spec = tmp_path / "aw_tiny.yaml"
    shutil.copy(TINY, spec)
    task = task_on(str(spec)).model_copy(update={"metadata": {"aw_template": "TinyAddNote"}})
    task.validation = {"validated": True, "mutations": [], "key": suites.replica_key(task)}
    out = tmp_path / "suite.json"
    out.write_text(json.dumps({"tasks": [task.model_dump(mode="json")]}))
    known = {"TinyAddNote": "aw_tiny"}
    assert [t.id for t in suites.load_replicas(out, "t", known).tasks] == [task.id]
    spec.write_text(spec.read_text() + "\n# an edit\n")
    assert suites.load_replicas(out, "t", known).tasks == []


# ----- coverage -----------------------------------------------------------------------------


def test_every_replica_template_is_androidworlds_and_every_uncovered_one_has_a_reason():
    names = {n for group in maker.aw_templates().values() for n in group}
    assert len(names) == 116
    ours = {str(t.name) for app in replica_names() for t in load_spec(app).tasks}
    assert ours <= names, sorted(ours - names)
    rows = maker.coverage()
    assert len(rows) == 116
    unexplained = [r["template"] for r in rows if not r["spec"] and not r["reason"]]
    assert not unexplained, f"add their reasons to NOT_COVERED: {unexplained}"
    assert not set(maker.NOT_COVERED) & ours  # a reason for a covered template is stale


def test_the_docs_coverage_table_is_todays():
    doc = (Path(__file__).parents[3] / "docs" / "androidworld.md").read_text()
    start, end = "<!-- coverage: start -->\n", "<!-- coverage: end -->"
    table = doc.split(start, 1)[1].split(end, 1)[0]
    assert table.strip() == maker.coverage_markdown().strip(), (
        "regenerate it: python -m palaestra.synthesis.androidworld --coverage"
    )


# ----- the committed suite ------------------------------------------------------------------


def committed(name: str = suites.REPLICA) -> list[Task]:
    return get_suite(name).tasks


@pytest.mark.parametrize(("name", "fam"), [(suites.REPLICA, "mobile"), (suites.REPLICA_WEB, "web")])
def test_the_committed_suite_holds_validated_replica_tasks_under_todays_keys(name, fam):
    tasks = committed(name)
    assert tasks, f"{name} has no validated task: python -m {maker.__name__}"
    data = json.loads(suites.REPLICA_FILES[name].read_text())
    assert len(tasks) == len(data["tasks"])  # no task's key went stale
    code = code_digest(fam)
    old = sorted({t.id for t in tasks if t.validation["code"] != code})
    assert not old, f"validated by older code: {old[:5]}; re-make: python -m {maker.__name__}"
    known = suites.replica_templates()
    for task in tasks:
        template, _, seed = task.id.partition("/")
        number, _, variant = seed.partition("-")
        assert template in known and number.isdigit() and variant in ("", "ask", "llm"), task.id
        assert task.metadata["aw_template"] == template == task.public.domain
        spec = load_spec(known[template])
        assert task.public.app == spec.replica_of.app and task.setup["app"] == spec.name
        assert task.family == fam and task.validation["validated"]
        assert task.validation["noop_score"] < 1.0 and len(task.validation["oracle_scores"]) == 3
    assert all(d["reason"] for d in data["drops"])


@pytest.mark.parametrize(
    ("name", "layout"), [(suites.REPLICA, maker.PHONE), (suites.REPLICA_WEB, maker.WEB)]
)
def test_the_committed_tasks_are_what_the_generator_makes_today(name, layout):
    """Regenerated without a browser, every shipped task is unchanged (ids, words, checks)."""
    tasks = committed(name)
    assert tasks, f"{name} has no validated task: python -m {maker.__name__}"
    specs = {app: load_spec(app) for app in {t.setup["app"] for t in tasks}}
    seeds = 1 + max(int(t.id.rpartition("/")[2].partition("-")[0]) for t in tasks)
    fresh = {c.id: c.made.task for c in maker.candidates(specs, seeds, layout) if c.made}
    for task in tasks:
        twin = task.id.endswith(maker.LLM)  # an LLM's wording of its seed's task
        now = fresh[task.id.removesuffix(maker.LLM)]
        assert twin or task.instruction == now.instruction, task.id
        assert task.verifier == now.verifier, task.id
        assert task.setup == now.setup and task.oracle == now.oracle, task.id


@pytest.mark.parametrize("name", [suites.REPLICA, suites.REPLICA_WEB])
def test_no_shipped_task_repeats_an_earlier_seeds_task_or_answer(name):
    """What the maker's repeat rule promises holds for the committed files: every shipped task
    of a template is a task of its own, and no two of its questions share an answer (which a
    policy would learn from the template instead of looking)."""
    from palaestra.synth_apps.generate import Generated

    by_template: dict[str, list[Task]] = {}
    for task in committed(name):
        if not task.id.endswith(maker.LLM):  # a twin is its seed's task in other words
            by_template.setdefault(task.metadata["aw_template"], []).append(task)
    for tasks in by_template.values():
        earlier: dict = {}
        for task in sorted(tasks, key=lambda t: int(t.id.rpartition("/")[2].partition("-")[0])):
            again = maker.repeats(Generated(task), task.id.endswith("-ask"), earlier)
            assert not again, f"{task.id}: {again}"


@pytest.mark.browser
def test_a_replica_task_plays_through_the_gateway(gateway, tmp_path):
    """The oracle solves a committed replica task on a gateway worker's phone (RemoteEnv), and
    ``palaestra eval`` runs the suite's task through the normal eval path."""
    from typer.testing import CliRunner

    from palaestra.cli import app
    from palaestra.client import RemoteEnv

    task = committed()[0]
    env = RemoteEnv(task=f"{suites.REPLICA}/{task.id}", base_url=gateway, transport="ws")
    try:
        policy = family("mobile").policy("oracle")
        obs, info = env.reset(seed=0)
        policy.reset(task)
        assert info["task"]["metadata"]["domain"] == task.id.partition("/")[0]
        assert "oracle" not in info["task"]
        for _ in range(task.max_steps):
            obs, reward, terminated, truncated, info = env.step(policy.act(obs, info))
            if terminated or truncated:
                break
        assert terminated and reward == 1.0, obs.get("last_action_error")
    finally:
        env.close()
    out = tmp_path / "eval"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            f"{suites.REPLICA}/{task.id}",
            "--agent",
            "oracle",
            "--url",
            gateway,
            "--out",
            str(out),
            "--no-record",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"] == 1 and summary["success_rate"] == 1.0, summary
