"""Generated tasks: grounded, reproducible, verified by SQL derived from the app's effects."""

from palaestra.synth_apps.generate import TaskGenerator
from palaestra.synth_apps.spec import load_spec


def test_same_seed_same_tasks_and_variants_differ():
    spec = load_spec("train")
    a = [g.task for g in TaskGenerator(spec, variant=2).generate(10, seed=7)]
    b = [g.task for g in TaskGenerator(spec, variant=2).generate(10, seed=7)]
    assert [t.model_dump() for t in a] == [t.model_dump() for t in b]
    c = [g.task for g in TaskGenerator(spec, variant=0).generate(10, seed=7)]
    assert [t.oracle for t in a] != [t.oracle for t in c]


def test_booking_task_checks_the_new_row_and_the_seat_count():
    spec = load_spec("train")
    made = next(
        g
        for g in TaskGenerator(spec).generate(30, seed=1)
        if g.task.metadata["kind"] == "operation" and "Book" in g.task.instruction
    )
    checks = made.task.verifier["checks"]
    queries = " | ".join(c.get("query", "") for c in checks)
    assert "SELECT count(*) FROM booking WHERE" in queries  # the booking, exactly once
    assert "SELECT seats_left FROM trip WHERE id = ?" in queries  # seats went down
    names = {m["name"] for m in made.mutations}
    assert {"a second booking", "booking.seat_class differs", "nothing done"} <= names
    # the agent never sees the plan or the checks
    view = made.task.agent_view()
    assert "oracle" not in view and "verifier" not in view and "setup" not in view


def test_every_kind_is_generated_with_an_oracle():
    made = TaskGenerator(load_spec("train")).generate(40, seed=3)
    kinds = {g.task.metadata["kind"] for g in made}
    assert kinds == {"operation", "info", "infeasible"}
    for g in made:
        assert g.task.oracle and g.task.oracle.data[-1]["op"] in ("done", "infeasible")
        assert len({t.task.instruction for t in made}) == len(made)
