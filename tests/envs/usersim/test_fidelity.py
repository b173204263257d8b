"""The fidelity harness measures the user from transcripts, and catches a bad user."""

from PIL import Image
from typer.testing import CliRunner

from palaestra.cli import app
from palaestra.envs.runtimes.simuser.user import Goal
from palaestra.envs.usersim import fidelity
from palaestra.envs.usersim.suites import generate
from palaestra.envs.usersim.world import domain

GOAL = Goal("cancel", "cancel my flight reservation", {"reservation_id": "ZFA04Y"}, ("refund",))


def chat(*turns, closed=False):
    msgs = [{"role": r, "content": c} for r, c in turns]
    if closed:
        msgs[-1]["closed"] = True
    return msgs


def score(*turns, closed=False):
    return fidelity.score_conversation(domain("airline"), GOAL, chat(*turns, closed=closed))


def test_a_good_conversation_scores_clean():
    t = score(
        ("user", "I need to cancel my flight reservation."),
        ("assistant", "Could you tell me your reservation number?"),
        ("user", "It's ZFA04Y."),
        ("assistant", "I will cancel ZFA04Y with a refund of $200.00. Shall I proceed?"),
        ("user", "Yes, go ahead."),
        ("assistant", "ZFA04Y has been cancelled; $200.00 will be refunded."),
        ("user", "Thanks, bye!"),
        closed=True,
    )
    assert (t.decisions, t.right_decisions, t.invented_turns, t.premature, t.consistent) == (
        1,
        1,
        0,
        0,
        1,
    )


def test_a_bad_user_is_caught_on_every_behaviour():
    t = score(
        ("user", "I need to cancel my flight reservation."),
        ("assistant", "What is your user id?"),
        ("user", "It's mia_li_1234."),  # invented: the goal holds no user id
        ("assistant", "And your reservation number?"),
        ("user", "QQ12RT, I mean ZFA04Y."),  # two values for one slot
        ("assistant", "I will cancel reservation AB12CD. Shall I proceed?"),
        ("user", "Yes, go ahead."),  # agrees to the wrong reservation
        ("assistant", "Let me check."),
        ("user", "Thanks, bye!"),  # leaves before anything was done
        closed=True,
    )
    assert t.invented_turns == 2 and t.consistent == 0
    assert (t.decisions, t.right_decisions) == (1, 0)
    assert t.premature == 1
    report = fidelity.report(t)
    assert report.composite < 0.5


def test_the_composite_is_worked_out_from_the_four_behaviours():
    report = fidelity.FidelityReport(
        episodes=4,
        adherence=1.0,
        consistency=0.5,
        invented_rate=0.25,
        premature_rate=0.5,
        success={},
        counts={},
    )
    assert report.composite == 0.6875  # the mean of 1.0, 0.5, 1 - 0.25 and 1 - 0.5
    assert list(report.to_json())[5] == "composite"  # where the report has always shown it


def test_the_rule_based_user_over_scripted_assistants():
    tasks = generate("airline")[:10] + generate("train")[:10]
    report = fidelity.measure(tasks, seeds=1)
    assert report.success["competent"] >= 0.95
    assert report.success["irrelevant"] == report.success["early"] == 0.0
    assert report.success["wrong"] == 0.0
    assert report.adherence == 1.0 and report.invented_rate == 0.0
    assert report.premature_rate == 0.0 and report.composite == 1.0
    assert report.counts["decisions"] > 10


def test_fidelity_cli_prints_the_report(tmp_path):
    out, png = tmp_path / "fidelity.json", tmp_path / "fidelity.png"
    result = CliRunner().invoke(
        app,
        [
            "usersim",
            "fidelity",
            "-d",
            "airline",
            "--tasks",
            "4",
            "--seeds",
            "1",
            "--out",
            str(out),
            "--plot",
            str(png),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "composite behaviour score" in result.output and out.exists()
    assert Image.open(png).size[0] > 400
    bad = CliRunner().invoke(app, ["usersim", "fidelity", "-d", "space"])
    assert bad.exit_code != 0 and "unknown domain" in bad.output


def test_fidelity_cli_prints_success_per_wording_style():
    result = CliRunner().invoke(
        app, ["usersim", "fidelity", "-d", "train", "--tasks", "1", "--seeds", "1", "--styles"]
    )
    assert result.exit_code == 0, result.output
    assert "Success per wording style" in result.output and "instructions" in result.output
