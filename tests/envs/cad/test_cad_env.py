"""palaestra/cad-v0: semantic modeling on the real kernel, readable errors, undo/fork/export,
the sandboxed run_code baseline, the verifier, the generated suite and its validation, and the
family through the gateway with RemoteEnv."""

import json

import numpy as np
import pytest

from palaestra.client import RemoteEnv
from palaestra.envs.cad.env import CadEnv
from palaestra.envs.cad.families import FAMILIES
from palaestra.envs.cad.sandbox import Sandbox
from palaestra.envs.cad.suites import (
    PER_FAMILY,
    RECORD,
    all_tasks,
    load_suite,
    make_task,
    script_for,
)
from palaestra.tasks import get_suite
from palaestra.validation import validate_suite
from palaestra.verifiers import geometry

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def env():
    e = CadEnv(make_task("plate", 0))
    e.reset(seed=0)
    yield e
    e.close()


def play(env, actions):
    obs = None
    for a in actions:
        obs, *_ = env.step(a)
        assert not obs["last_action_error"], (a, obs["last_action_error"])
    return obs


def err(env, action):
    obs, *_ = env.step(action)
    assert obs["last_action_error"], action
    return obs["last_action_error"]


def test_observation_is_decision_oriented(env):
    obs = play(env, ["new_sketch('XY')", "rectangle(40, 30)", "extrude(5)"])
    props = json.loads(obs["properties"])
    assert props["volume"] == pytest.approx(6000) and props["bbox_size"] == [40, 30, 5]
    assert props["faces"] == 6 and props["valid"] and props["solids"] == 1
    assert "added 6000 mm³" in obs["feedback"]
    assert "3. extrude(distance=5.0" in obs["history"]
    topo = json.loads(obs["topology"])
    assert {f["id"] for f in topo["faces"]} == {f"f{i}" for i in range(6)}
    assert obs["views"].shape == (256, 256, 3) and obs["views"].dtype == np.uint8
    assert (obs["views"] != obs["views"][0, 0]).any()  # something is drawn
    assert "plate" in obs["spec"] and obs["target_views"].std() > 0


def test_selectors_pick_what_they_say(env):
    play(env, ["new_sketch('XY')", "rectangle(40, 30)", "extrude(5)"])
    env.step("inspect('select faces>Z')")
    assert json.loads(env._inspect)["faces"] and len(json.loads(env._inspect)["faces"]) == 1
    env.step("inspect('select edges|Z')")
    assert len(json.loads(env._inspect)["edges"]) == 4
    env.step("inspect('select edges of >Z')")
    assert len(json.loads(env._inspect)["edges"]) == 4
    obs = play(env, ["fillet('edges|Z or @20,15,0', 2)"])
    assert json.loads(obs["properties"])["faces"] == 10


@pytest.mark.parametrize(
    ("setup", "action", "phrase"),
    [
        ([], "rectangle(10, 10)", "no open sketch"),
        (["new_sketch('XY')"], "polygon('0,0 10,0 0,10 10,10')", "crosses edge"),
        (["new_sketch('XY')"], "rectangle(0, 10)", "must be a positive length"),
        (["new_sketch('XY')"], "circle(-3)", "must be a positive length"),
        (["new_sketch('XY')", "rectangle(10, 10)"], "extrude(-2)", "must be a positive length"),
        ([], "extrude(5)", "needs a sketch"),
        ([], "fillet('>Z', 1)", "no part yet"),
        (
            ["new_sketch('XY')", "rectangle(40, 30)", "extrude(4)"],
            "fillet('edges of >Z', 6)",
            "fillet radius 6 is larger than the 4 mm edge",
        ),
        (
            ["new_sketch('XY')", "rectangle(40, 30)", "extrude(4)"],
            "fillet('edges|Q', 1)",
            "axis must be X, Y or Z",
        ),
        (
            ["new_sketch('XY')", "rectangle(40, 30)", "extrude(4)"],
            "chamfer('e99', 1)",
            "there is no e99",
        ),
        (
            ["new_sketch('XY')", "rectangle(40, 30)", "extrude(4)"],
            "fillet('%CIRCLE', 1)",
            "no edges match",
        ),
        (["new_sketch('XY')", "rectangle(40, 30)", "extrude(4)"], "shell('>Z', 3)", "no cavity"),
        (
            ["new_sketch('XY')", "rectangle(40, 30)", "extrude(4)"],
            "hole('>Z', '90,0', 2)",
            "not on face",
        ),
        (
            [
                "new_sketch('XY')",
                "rectangle(40, 30)",
                "extrude(4)",
                "new_sketch('>Z')",
                "circle(3)",
            ],
            "extrude(2, mode='cut')",
            "removed nothing",
        ),
        (["new_sketch('XY')", "rectangle(40, 30)", "extrude(4)"], "pattern('linear', 3)", None),
        (
            ["new_sketch('XY')", "rectangle(40, 30)", "extrude(4)", "fillet('edges|Z', 2)"],
            "pattern('polar', 3)",
            "pattern repeats the last",
        ),
        ([], "undo()", "nothing to undo"),
        ([], "inspect('export step')", "no part"),
        ([], "run_code('import os\\nresult = 1')", "import os is not allowed"),
        ([], "run_code('result = open(\"/etc/passwd\")')", "open is not available"),
        ([], "run_code('x = 1')", "must assign"),
    ],
)
def test_bad_input_is_a_sentence_and_changes_nothing(env, setup, action, phrase):
    play(env, setup)
    before = env.model.calls()
    obs, *_ = env.step(action)
    if phrase is None:  # a valid action for contrast
        assert not obs["last_action_error"]
        return
    assert phrase in obs["last_action_error"], obs["last_action_error"]
    assert env.model.calls() == before


def test_undo_fork_and_export(env):
    play(env, ["new_sketch('XY')", "rectangle(40, 30)", "extrude(5)", "hole('>Z', '0,0', 4)"])
    assert geometry.hole_summary(env.model.state.part) == {"through": 1, "blind": 0}
    obs = play(env, ["undo()"])
    assert json.loads(obs["properties"])["volume"] == pytest.approx(6000)
    options = env.fork(upto=2)
    other = CadEnv(make_task("plate", 0))
    obs, _ = other.reset(options=options)
    assert len(other.model.nodes) == 2 and other.model.state.sketch is not None
    obs = play(other, ["extrude(7)"])
    assert json.loads(obs["properties"])["bbox_size"] == [40, 30, 7]
    other.close()
    obs = play(env, ["inspect('export step')"])
    assert obs["inspect"].startswith("ISO-10303-21") and "MANIFOLD_SOLID_BREP" in obs["inspect"]
    obs = play(env, ["inspect('export stl')"])
    assert obs["inspect"].lstrip().startswith("solid") and "facet normal" in obs["inspect"]
    with pytest.raises(Exception, match="cannot fork"):
        CadEnv(make_task("plate", 0)).reset(options={"history": ["extrude(5)"]})


def test_dense_reward_sums_to_the_score():
    task = make_task("standoff", 0)
    env = CadEnv(task, dense_reward=True, observe=("feedback",))
    env.reset(seed=0)
    total = 0.0
    for a in task.oracle.data:
        _, reward, terminated, _, info = env.step(a)
        total += reward
    assert terminated and info["verifier"]["success"]
    assert total == pytest.approx(1.0, abs=1e-6)
    env.close()


def test_sample_of_every_family_validates():
    tasks = [make_task(f, 7) for f in FAMILIES]
    report = validate_suite(tasks, adversaries=False)  # adversaries: test_cad_adversaries.py
    assert report["validated"] == len(FAMILIES), {
        k: v["reason"] for k, v in report["tasks"].items() if not v["validated"]
    }
    for rep in report["tasks"].values():
        assert rep["oracle_scores"] == [1.0, 1.0] and rep["noop_score"] == 0.0
        # the mutant (one key dimension wrong) was played and scored below the oracle: a
        # mutation that changed nothing, or was never played, fails here
        assert set(rep["mutants"]) == {"wrong-dimension"}
        assert rep["mutants"]["wrong-dimension"] < 1.0


def test_suite_has_150_validated_tasks_hiding_their_answers():
    tasks = load_suite()
    # every generated task has a current record (a stale validation.json would drop some);
    # the ones validation dropped (an adversary won) are recorded with the reason
    records = RECORD.load()["tasks"]
    assert all(records[t.id]["key"] == RECORD.key(t) for t in all_tasks())
    assert len(all_tasks()) == PER_FAMILY * len(FAMILIES) and len(tasks) >= 150
    assert {t.metadata["part_family"] for t in tasks} == set(FAMILIES)
    assert all(t.validation and t.validation["validated"] for t in tasks)
    suite = get_suite("cad-parts")
    view = suite.tasks[0].agent_view()
    assert "oracle" not in view and "setup" not in view and "verifier" not in view


def test_run_code_baseline_reaches_the_target():
    for family in ("flange", "shaft"):
        task = make_task(family, 3)
        env = CadEnv(task, observe=("properties",))
        env.reset(seed=0)
        obs, *_ = env.step({"name": "run_code", "args": {"script": script_for(task)}})
        assert not obs["last_action_error"], obs["last_action_error"]
        _, reward, terminated, _, info = env.step("submit()")
        assert terminated and info["verifier"]["success"] and reward >= 0.95
        env.close()


def test_sandbox_contains_loops_and_kernel_crashes():
    box = Sandbox(cpu_seconds=1, wall_seconds=4)
    try:
        loop = box.run("from build123d import *\nwhile True:\n    pass\nresult = Box(1, 1, 1)")
        assert loop.shape is None and "CPU time limit" in loop.error
        crash = box.run("import ctypes\nctypes.string_at(0)\nresult = 1", checked=False)
        assert crash.shape is None and "crashed the CAD kernel (SIGSEGV)" in crash.error
        ok = box.run("from build123d import *\nresult = Box(2, 3, 4)")
        assert ok.shape is not None and ok.shape.volume == pytest.approx(24)
    finally:
        box.close()


def test_a_crashing_script_fails_the_step_and_the_session_goes_on(env):
    class Unchecked(Sandbox):
        def run(self, script, *, checked=True):
            return super().run(script, checked=False)

    env.model._sandbox = Unchecked()
    obs = play(env, ["new_sketch('XY')", "rectangle(10, 10)", "extrude(1)"])
    error = err(env, "run_code('import ctypes\\nctypes.string_at(0)\\nresult = 1')")
    assert "SIGSEGV" in error and "model is unchanged" in error
    obs = play(env, ["inspect('properties')"])
    assert json.loads(obs["inspect"])["volume"] == pytest.approx(100)


def test_oracle_through_the_gateway_and_fork_in_a_new_session(gateway):
    remote = RemoteEnv(task="cad-parts/hinge-002", base_url=gateway, transport="ws")
    try:
        obs, info = remote.reset(seed=0)
        assert "oracle" not in info["task"] and obs["views"].shape == (256, 256, 3)
        oracle = make_task("hinge", 2).oracle.data
        for action in oracle[:-1]:
            obs, *_ = remote.step(action)
            assert not obs["last_action_error"], obs["last_action_error"]
        obs, *_ = remote.step("inspect('history')")
        history = json.loads(obs["inspect"])
        obs, reward, terminated, _, info = remote.step("submit()")
        assert terminated and info["verifier"]["success"] and reward == pytest.approx(1.0)
    finally:
        remote.close()
    forked = RemoteEnv(task="cad-parts/hinge-002", base_url=gateway)
    try:
        # the plate alone is the part's outline (worth 0); with the pin hole drilled, partial
        upto = len(history) - 2
        obs, _ = forked.reset(options={"history": history, "upto": upto})
        assert json.loads(obs["properties"])["volume"] > 0
        assert f"forked at step {upto}" in obs["feedback"]
        _, reward, terminated, _, info = forked.step("submit()")
        assert terminated and not info["verifier"]["success"] and 0.1 < reward < 0.9
    finally:
        forked.close()
