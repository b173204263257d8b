"""CAD verifier trust: cheap general strategies (the target's bounding box, its outlines, its
visual hull, reward farming) earn at most 0.1 summed dense reward and never succeed, while the
oracle still earns 1.0 and real progress earns partial reward that grows; validation drops a
task whose (deliberately weakened) verifier an adversary beats, naming it and keeping its
trajectory."""

import pytest

from palaestra.envs.cad import FAMILY
from palaestra.envs.cad.env import CadEnv
from palaestra.envs.cad.policies import ADVERSARIES, DENSE_ADVERSARIES
from palaestra.envs.cad.suites import default_verifier, make_task
from palaestra.envs.cad.validation import PLAN
from palaestra.policies import ReplayPolicy
from palaestra.resolve import resolve
from palaestra.tasks import Task
from palaestra.validation import plan_of, validate_task
from palaestra.verifiers.validation import ADVERSARY_CEILING, play

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def plate():
    return make_task("plate", 0)  # the plate: its bounding box scored 0.965


def episode(task, policy, dense):
    """Dense reward for the farming adversaries (what they farm); the others' single reward at
    the end is the same sum (the dense rewards telescope), at a fraction of the verifications."""
    env = CadEnv(task, dense_reward=dense, observe=("feedback",))
    try:
        return play(env, task, policy, strict=False)
    finally:
        env.close()


@pytest.mark.parametrize("name", ["bbox", "outline", "views", "farm", "repeat"])
def test_envelopes_and_farming_earn_nothing_on_the_plate(plate, name):
    run = episode(plate, ADVERSARIES[name](), dense=name in DENSE_ADVERSARIES)
    assert not run.result.success
    assert run.total_reward <= ADVERSARY_CEILING and run.reward <= ADVERSARY_CEILING
    # the dense rewards telescope: undoing and redoing a step pays nothing extra
    assert run.total_reward == pytest.approx(run.result.score, abs=1e-9)
    if name == "bbox":  # the envelope is close in volume, not in detail
        iou = next(c for c in run.result.checks if c.kind == "cad_iou")
        assert iou.score > 0.95


def test_oracle_earns_1_and_real_progress_earns_more_at_each_feature(plate):
    env = CadEnv(plate, dense_reward=True, observe=("feedback",))
    env.reset(seed=0)
    scores, total = [], 0.0
    for action in plate.oracle.data:
        _, reward, terminated, _, info = env.step(action)
        total += reward
        scores.append(env.last_verification.score)
    env.close()
    assert terminated and info["verifier"]["success"] and total == pytest.approx(1.0)
    assert scores == sorted(scores)  # never a step back along the reference solution
    # the block and its fillets are the outline (next to nothing); the first hole, a row of
    # them, the grid: growing, full marks only when right
    block, fillets, hole, row, grid = scores[2:7]
    assert block == 0.0 and fillets <= 0.01 and 0.1 < hole < row <= 0.9 and grid == 1.0


def hand_task(verifier):
    """A hand-written task (no mutant): a plate with one small hole, 99% its bounding box."""
    target = ["new_sketch('XY')", "rectangle(40, 30)", "extrude(5)", "hole('>Z', '0,0', 2)"]
    return Task(
        id="plate-with-a-hole",
        family="cad",
        env="palaestra/cad-v0",
        instruction="A 40 x 30 x 5 mm plate with a through hole of radius 2 mm at its centre.",
        setup={"target_actions": target},
        verifier=verifier,
        max_steps=20,
        oracle={"policy": "replay", "data": [*target, "submit()"]},
    )


def test_validation_drops_a_task_whose_weak_verifier_an_adversary_beats():
    table = {name: ADVERSARIES[name] for name in ("bbox", "claim")}
    weak = {"kind": "cad_part", "checks": [{"kind": "cad_iou", "min": 0.95}]}  # IoU alone
    report = validate_task(hand_task(weak), repeats=1, adversaries=table)
    assert not report.validated and "'bbox'" in report.reason
    won = report.adversaries["bbox"]
    assert won["success"] and won["actions"][-1] == "submit()"
    assert any(a.startswith("rectangle(40, 30") for a in won["actions"])
    assert (
        not report.adversaries["claim"]["success"] and "actions" not in report.adversaries["claim"]
    )
    sound = validate_task(hand_task(default_verifier()), repeats=1, adversaries=table)
    assert sound.validated, sound.reason
    assert all(r["reward"] <= ADVERSARY_CEILING for r in sound.adversaries.values())


def test_family_names_its_adversaries_and_its_validation():
    assert FAMILY.adversary_names() == list(ADVERSARIES)
    assert resolve(FAMILY.validation) is PLAN is plan_of("cad")
    policy = FAMILY.policy("views")
    assert not isinstance(policy, ReplayPolicy)
