"""The usersim suite: generated, validated by running, reproducible, oracle-free for agents."""

from collections import Counter

from palaestra.envs.usersim.suites import generate
from palaestra.envs.usersim.world import domain_names, fresh
from palaestra.tasks import get_suite
from palaestra.validation import validate_task


def test_the_suite_has_150_validated_tasks_over_four_domains():
    suite = get_suite("usersim")
    assert len(suite.tasks) >= 150
    per_domain = Counter(t.setup["domain"] for t in suite.tasks)
    assert set(per_domain) == set(domain_names()) == {"airline", "retail", "train", "hotel"}
    assert min(per_domain.values()) >= 35
    assert all(t.validation and t.validation["validated"] for t in suite.tasks)
    ungrantable = sum(not t.metadata["grantable"] for t in suite.tasks)
    assert 0.1 < ungrantable / len(suite.tasks) < 0.4
    for name in domain_names():
        intents = {t.metadata["intent"] for t in suite.tasks if t.setup["domain"] == name}
        assert len(intents) >= 3, name


def test_generation_is_reproducible_and_seeds_differ():
    for name in domain_names():
        assert [t.model_dump() for t in generate(name, 7, 10)] == [
            t.model_dump() for t in generate(name, 7, 10)
        ]
    assert [t.id for t in generate("airline", 1, 10)] != [t.id for t in generate("airline", 2, 10)]


def test_a_task_with_a_wrong_reference_plan_is_rejected():
    task = next(t for t in generate("retail") if t.metadata["grantable"])
    plan = [s for s in task.oracle.data if "call" not in s]
    broken = task.model_copy(update={"oracle": task.oracle.model_copy(update={"data": plan})})
    report = validate_task(broken)
    assert not report.validated and "oracle run 1 failed" in report.reason


def test_worlds_are_copies_a_session_cannot_touch_another():
    a, b = fresh("airline", 7), fresh("airline", 7)
    a.execute("DELETE FROM reservations")
    assert b.execute("SELECT count(*) FROM reservations").fetchone()[0] > 0


def test_the_train_world_is_the_synthesized_train_apps_world():
    from palaestra.synth_apps import data
    from palaestra.synth_apps.spec import load_spec

    with data.opened(data.template(load_spec("train"), 7)) as app:
        app_codes = sorted(r[0] for r in app.execute("SELECT code FROM trip"))
    ours = sorted(r[0] for r in fresh("train", 7).execute("SELECT code FROM trip"))
    assert ours == app_codes and len(ours) == 120
