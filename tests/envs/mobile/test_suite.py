"""The shipped phone suite (``envs/mobile/suites.py``, made by ``palaestra.synthesis.phone``): it
loads through the registry, it is what the generator makes from its maker's fixed seeds (no drift
since ``phone.json`` was written), and its oracle solves a task on the real embedded phone."""

from __future__ import annotations

import json
import math

import pytest

from palaestra.envs.mobile import suites
from palaestra.family import family
from palaestra.policies import run_episode
from palaestra.synth_apps.generate import TaskGenerator
from palaestra.synth_apps.spec import domain_names, load_spec
from palaestra.synthesis import phone
from palaestra.synthesis.pipeline import OVERSHOOT
from palaestra.tasks import get_suite, suite_names
from palaestra.validation import plan_of


def test_the_suite_is_registered_and_every_task_validated():
    assert "phone" in suite_names()
    assert "phone" in {s.name for s in family("mobile").suites}
    suite = get_suite("phone")
    made = json.loads(suites.FILE.read_text())["report"]
    assert len(suite.tasks) == made["validated"] >= 20
    assert {t.metadata["app"] for t in suite.tasks} == set(domain_names())
    for task in suite.tasks:
        assert task.family == "mobile" and task.env == "palaestra/mobile-v0"
        assert task.oracle is not None and task.validation and task.validation["validated"]
        assert task.validation["noop_score"] < 1.0


def test_the_committed_tasks_are_what_the_seeds_make():
    """Regenerate the candidates (no browser): every shipped task is one of them, unchanged."""
    domains = domain_names()
    groups = [(d, v) for d in domains for v in range(phone.VARIANTS)]
    per_group = max(1, math.ceil(phone.TASKS * OVERSHOOT / len(groups)))
    made = {}
    for domain, variant in groups:
        gen = TaskGenerator(load_spec(domain), variant=variant, layout="mobile", app_ref=domain)
        for g in gen.generate(per_group, seed=phone.SEED, prefix="phone-"):
            made[g.task.id] = g.task
    for task in get_suite("phone").tasks:
        fresh = made[task.id]
        assert task.instruction == fresh.instruction, task.id
        assert task.setup == fresh.setup and task.verifier == fresh.verifier, task.id
        assert task.oracle == fresh.oracle, task.id
        assert task.max_steps == fresh.max_steps + 10  # the pipeline's allowance for scrolling


@pytest.mark.browser
def test_the_oracle_solves_a_phone_task_and_noop_does_not():
    task = get_suite("phone").tasks[0]
    env = plan_of("mobile").open()
    try:
        mobile = family("mobile")
        episode = run_episode(env, mobile.policy("oracle"), task, seed=0, strict=True)
        assert env.last_verification is not None and env.last_verification.success, episode
        run_episode(env, mobile.policy("noop"), task, seed=0, max_steps=1)
        assert env.last_verification is not None and not env.last_verification.success
    finally:
        env.close()
