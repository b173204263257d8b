"""The tau2 suites against their recorded validation: the record has an entry for every task
under the task's current key, the shipped suite is exactly the tasks recorded as validated (a
dropped one always with its reason), a sample (every 25th kept task, every 8th dropped one)
validates again to its recorded verdict and reason, and the gold assistant solves every task
(one episode each). A change that moves the verdict of a task outside the sample is not caught
here: the record's code digest (``ValidationRecord.stale``) and CI's full re-validation
(``make revalidate``) are what catch it; agreement with tau2's own code is
``test_crosscheck.py``."""

import pytest

from palaestra.envs.tau2 import FAMILY, suites
from palaestra.envs.tau2.env import Tau2Env
from palaestra.policies import run_episode
from palaestra.tasks import get_suite
from palaestra.validation import validate_task

DOMAINS = ("retail", "telecom")


@pytest.fixture(scope="module")
def env():
    e = Tau2Env()
    yield e
    e.close()


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_record_covers_every_task_as_it_is_now(domain):
    record = suites.record(domain)
    reports = record.load()["tasks"]
    made = suites.tasks(domain)
    assert {t.id for t in made} == set(reports)
    assert all(reports[t.id]["key"] == record.key(t) for t in made)
    shipped = {t.id for t in get_suite(f"tau2-{domain}").tasks}
    assert shipped == {tid for tid, r in reports.items() if r["validated"]}
    dropped = [r for r in reports.values() if not r["validated"]]
    assert all(r["reason"] for r in dropped)  # never dropped silently
    assert all(r["noop_score"] == 0.0 for r in reports.values() if r["validated"])


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_sample_revalidates_to_the_recorded_verdict(domain, env):
    reports = suites.record(domain).load()["tasks"]
    made = suites.tasks(domain)
    kept = [t for t in made if reports[t.id]["validated"]][::25]
    dropped = [t for t in made if not reports[t.id]["validated"]][::8]
    for task in [*kept, *dropped]:
        now = validate_task(task, env=env).to_json()
        assert now["validated"] == reports[task.id]["validated"], (task.id, now["reason"])
        assert now["reason"] == reports[task.id]["reason"], task.id


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_gold_assistant_solves_every_task(domain, env):
    failed = []
    for task in suites.tasks(domain):
        run_episode(env, FAMILY.policy("tau2_gold", seed=0), task, seed=0)
        if not env.last_verification.success:
            failed.append(task.id)
    assert failed == []  # 114 of 114 in each domain
