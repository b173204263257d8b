"""Execution validation on real Chromium: proven tasks pass, broken verifiers are caught."""

import copy
import logging

import httpx
import pytest

from palaestra.synth_apps.app import APP_COOKIE, host
from palaestra.synth_apps.generate import TaskGenerator
from palaestra.synth_apps.spec import DOMAINS_DIR, load_spec
from palaestra.synth_apps.variants import make_variant
from palaestra.validation import validate_task

pytestmark = pytest.mark.browser


def validate_made(env, made, **options):
    """A generated task validated with its mutants, as the synthesis pipeline does."""
    return validate_task(made.task, env=env, mutations=made.mutations, **options)


@pytest.fixture(scope="module")
def env():
    from palaestra.envs.web.env import WebEnv

    env = WebEnv(observe=("axtree", "url", "goal", "chat"))
    yield env
    env.close()


@pytest.fixture(scope="module")
def booking():
    made = TaskGenerator(load_spec("train"), variant=1).generate(30, seed=5)
    return next(
        g for g in made if "Book" in g.task.instruction and g.task.metadata["kind"] == "operation"
    )


def test_a_generated_task_validates(env, booking):
    report = validate_made(env, booking)
    assert report.validated, report.reason
    assert report.oracle_scores == [1.0, 1.0, 1.0] and report.noop_score == 0.0
    assert report.mutants and all(score < 1.0 for score in report.mutants.values())


def test_a_wrong_verifier_fails_the_oracle(env, booking):
    bad = copy.deepcopy(booking)
    check = next(c for c in bad.task.verifier["checks"] if "WHERE" in c.get("query", ""))
    check["params"] = [*check["params"][:-1], "someone else"]
    report = validate_made(env, bad, repeats=1)
    assert not report.validated and report.reason.startswith("oracle run 1 failed")


def test_a_verifier_blind_to_near_misses_is_caught(env, booking):
    lax = copy.deepcopy(booking)
    # only "one more booking": a booking in the wrong class would pass it
    lax.task.verifier = {
        "kind": "all",
        "checks": [
            c for c in booking.task.verifier["checks"] if c.get("describe") == "booking rows"
        ],
    }
    report = validate_made(env, lax, repeats=1)
    assert not report.validated and "passes the verifier" in report.reason


def test_a_verifier_that_doing_nothing_satisfies_is_caught(env, booking):
    trivial = copy.deepcopy(booking)
    trivial.task.verifier = {"kind": "all", "checks": [{"kind": "feasible"}]}
    report = validate_made(env, trivial, repeats=1)
    assert not report.validated and report.reason.startswith("doing nothing scores")


def test_an_oracle_that_cannot_act_is_caught(env, booking):
    lost = copy.deepcopy(booking)
    lost.task.oracle.data[0]["name"] = "No such link"
    report = validate_made(env, lost, repeats=1)
    assert not report.validated and "No such link" in report.reason


def test_app_crash_shows_an_error_page_and_is_logged(caplog):
    import yaml

    spec = yaml.safe_load((DOMAINS_DIR / "train.yaml").read_text())
    spec["operations"]["cancel"]["let"]["fee"] = "record.total / 0"
    spec = load_spec(spec)
    session = host().open(spec, make_variant(spec, 0), 0)
    url = host().url(session)
    jar = {APP_COOKIE: session.key}
    with caplog.at_level(logging.ERROR, logger="palaestra.synth_apps"):
        page = httpx.post(f"{url}do/cancel/1", data={"_step": "0"}, cookies=jar)
    assert page.status_code == 500 and "Something went wrong" in page.text
    assert "ZeroDivisionError" in caplog.text
    assert httpx.get(url, cookies=jar).status_code == 200  # the app lives on
    host().close(session.token)


def test_no_route_reaches_the_database():
    spec = load_spec("train")
    session = host().open(spec, make_variant(spec, 0), 0)
    base = host().origin
    jar = {APP_COOKIE: session.key}
    for path in (
        f"/s/{session.token}/{session.db.name}",
        f"/s/{session.token}/../{session.db.name}",
        f"/{session.db.name}",
        str(session.db),
    ):
        assert httpx.get(base + path, follow_redirects=True, cookies=jar).status_code == 404
    page = httpx.get(host().url(session) + "list/1", cookies=jar).text
    assert str(session.db.parent) not in page and "sqlite" not in page
    host().close(session.token)
    assert httpx.get(host().url(session), cookies=jar).status_code == 404  # closed: gone
