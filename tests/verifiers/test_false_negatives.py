"""The false-negative library (issue 27): for every check kind that reads what an agent says,
correct solutions in other formats and phrasings pass, and the cheap strategies that won
before (hedges, record dumps, candidate rules named, false counts) fail.

Each case is real data through the real check: a SQLite app database, a chat, a visit log, a
usersim episode's state, as the probes give them.
"""

import json
import sqlite3
import subprocess

import pytest

from palaestra.chat import ANSWER, INFEASIBLE
from palaestra.verifiers import answers
from palaestra.verifiers.app_state import visits_path
from palaestra.verifiers.base import DeclarativeVerifier
from palaestra.verifiers.tau2 import told, told_any_format
from palaestra.verifiers.usersim import _said, precision
from palaestra.verifiers.validation import StaticProbe

# ----- an app with values of every kind in many columns and records ---------------------------
ORDERS = [
    # number, date, product, units, total, recipient, address, status, time, phone
    ("ORD-12345", "2026-12-05", "Mineral Sunscreen SPF 50", 1, 1000.0, "John Smith",
     "12 Mill Street", "delivered", "14:05", "01223 238596"),
    ("ORD-22222", "2026-11-03", "Wireless Earbuds Pro", 2, 89.99, "Ann Lee",
     "7 Park Road", "pending", "17:45", "01223 111111"),
    ("ORD-33333", "2026-10-20", "Yoga Mat Deluxe", 3, 60.0, "Raj Patel",
     "3 High Street", "shipped", "09:10", "01223 222222"),
]  # fmt: skip


@pytest.fixture
def app(tmp_path):
    path = tmp_path / "app.sqlite"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, number TEXT, date TEXT, product TEXT, "
        "units INTEGER, total REAL, recipient TEXT, address TEXT, status TEXT, slot TEXT, "
        "phone TEXT)"
    )
    conn.executemany("INSERT INTO orders VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", ORDERS)
    conn.commit()
    conn.close()
    visits_path(path).write_text("")
    return str(path)


def answer(app, said, value, normalize="text", goal="", others=()):
    check = {"kind": "answer", "value": value, "normalize": normalize, "others": list(others)}
    probe = StaticProbe({"app_db": app, "chat": [ANSWER + said], "goal": goal})
    return DeclarativeVerifier(check).verify(probe)


TOTAL = "What was the total of order ORD-12345?"
CORRECT = [  # (answer, expected, normalize, question)
    ("$1,000.00", "1000.00", "number", TOTAL),
    ("1000", "1000.00", "number", TOTAL),
    ("1,000 dollars", "1000.00", "number", TOTAL),
    ("EUR 1000.0", "1000.00", "number", TOTAL),
    ("Order ORD-12345, placed on December 5, 2026, came to $1,000.00.", "1000.00", "number",
     TOTAL),
    ("60.0", "60.00", "number", "What was the total of order ORD-33333?"),
    ("60", "60.0", "number", "What was the total of order ORD-33333?"),
    ("It leaves at 2:05 PM.", "14:05", "text", "When is the delivery slot of ORD-12345?"),
    ("2:05pm", "14:05", "text", ""),
    ("14:05", "14:05", "text", ""),
    ("December 5, 2026", "2026-12-05", "date", "When was order ORD-12345 placed?"),
    ("5 December 2026", "2026-12-05", "date", ""),
    ("Dec 5th", "2026-12-05", "date", ""),
    ("2026/12/05", "2026-12-05", "date", ""),
    ("05.12.2026", "2026-12-05", "date", ""),
    ("Saturday, 5th of December", "2026-12-05", "date", ""),
    ("+44 1223 238596", "01223 238596", "text", "What is the phone number on ORD-12345?"),
    ("01223-238596", "01223 238596", "text", ""),
    ("Order ORD-12345 from 2026-12-05 is delivered.", "delivered", "text",
     "What is the status of order ORD-12345?"),
    ("DELIVERED", "delivered", "text", ""),
    ('The "Mineral Sunscreen SPF 50" costs $1,000.00', "1000.00", "number",
     'How much does "Mineral Sunscreen SPF 50" cost?'),
    ("Account 4455-9021 holds EUR 1000.00.", "1000.00", "number", ""),
]  # fmt: skip


@pytest.mark.parametrize(("said", "value", "normalize", "goal"), CORRECT)
def test_a_correct_answer_in_another_format_passes(app, said, value, normalize, goal):
    result = answer(app, said, value, normalize, goal)
    assert result.success, result.checks[0].detail


WRONG = [  # hedges across columns and records, dumps, another value
    ("1000.00 or 89.99", "1000.00", "number", TOTAL),
    ("$1,000.00 or maybe 60", "1000.00", "number", TOTAL),
    ("1000.00 (1 unit)", "1000.00", "number", TOTAL),  # the units column: another number
    ("14:05 or 17:45", "14:05", "text", ""),
    ("2:05 PM, or else 9:10 AM", "14:05", "text", ""),
    ("2026-12-05 or 2026-11-03", "2026-12-05", "date", ""),
    ("01223 238596 / 01223 111111", "01223 238596", "text", ""),
    ("01223 238596 01223 111111", "01223 238596", "text", ""),
    ("+44 1223 238596, else +44 1223 111111", "01223 238596", "text", ""),
    ("delivered or pending", "delivered", "text", "What is the status of order ORD-12345?"),
    ("ORD-12345 2026-12-05 Mineral Sunscreen SPF 50 John Smith 12 Mill Street delivered",
     "delivered", "text", "What is the status of order ORD-12345?"),
    ("ORD-12345, 2026-12-05, John Smith, 12 Mill Street, 14:05, 1000.00", "1000.00", "number",
     TOTAL),
    ("89.99", "1000.00", "number", TOTAL),
    ("I have completed the task.", "1000.00", "number", TOTAL),
]  # fmt: skip


@pytest.mark.parametrize(("said", "value", "normalize", "goal"), WRONG)
def test_a_hedge_a_dump_or_another_value_fails(app, said, value, normalize, goal):
    assert not answer(app, said, value, normalize, goal).success


def test_a_candidate_from_another_column_is_a_rival_for_text_too(app):
    # "shipped" is ORD-33333's status: another record, the same column
    assert not answer(app, "delivered, maybe shipped", "delivered").success
    # the task's own others are candidates beside the app's
    assert not answer(app, "delivered or returned", "delivered", others=["returned"]).success


def test_every_format_reads_the_same_value():
    assert answers.key("$1,000.00", "number") == answers.key("1000", "number")
    assert answers.key("2:05 PM", "time") == answers.key("14:05", "time")
    assert answers.key("December 5, 2026", "date") == answers.key("2026-12-05", "date")
    assert answers.phone_key("+44 1223 238596") == answers.phone_key("01223 238596")
    assert answers.phone_key("0044 1223 238596") == answers.phone_key("01223 238596")


# ----- infeasibility reports (web and phone apps) ---------------------------------------------
LIMIT = {
    "kind": "infeasible",
    "keywords": ["daily limit", "limit", "exceed", "exceeds"],
    "evidence": [{"view": "account", "id": 1}],
    "others": ["insufficient", "not enough", "checking", "savings", "duplicate", "positive"],
}


def report(app, reason):
    visits_path(app).write_text(json.dumps({"view": "account", "id": 1}) + "\n")
    probe = StaticProbe({"app_db": app, "chat": [INFEASIBLE + reason]})
    return DeclarativeVerifier(LIMIT).verify(probe)


@pytest.mark.parametrize(
    "reason",
    [
        "This transfer would exceed the account's daily limit.",
        "Sorry, 500 is over the daily limit of that account.",
        "The amount exceeds what the account may send per day (its limit).",
    ],
)
def test_the_true_reason_in_any_words_passes(app, reason):
    assert report(app, reason).success


@pytest.mark.parametrize(
    "reason",
    [
        "It exceeds the daily limit, or there are insufficient funds.",
        "Cannot: daily limit, not enough money, savings account, duplicate payee.",
    ],
)
def test_naming_a_rule_that_does_not_block_fails(app, reason):
    assert not report(app, reason).success


# ----- usersim refusals -------------------------------------------------------------------------
SEATS = {
    "kind": "usersim_refused",
    "looked": [{"name": "get_trip", "args": {"trip": 7}}],
    "reason": [["#4"], ["seat", "space", "left", "remain"]],
    "others": [
        [["24 hour", "twenty four hour", "insur"]],
        [["basic economy"]],
        [["already departed", "has departed", "already left", "has left", "took off"]],
    ],
    "policy": [],
}


def refusal(message, heard=("We are a party of 5.",)):
    state = {
        "calls": [{"name": "get_trip", "args": {"trip": 7}, "after": 0}],
        "said": ["Let me look.", message],
        "heard": list(heard),
    }
    return DeclarativeVerifier(SEATS).verify(StaticProbe(state))


@pytest.mark.parametrize(
    "message",
    [
        "I'm sorry, only 4 seats are left, so a party of 5 won't fit.",
        "Unfortunately just four seats remain on that flight.",
        "There isn't space for 5 people: 4 seats left.",
    ],
)
def test_a_true_refusal_in_any_words_passes(message):
    assert refusal(message).success


@pytest.mark.parametrize(
    "message",
    [
        # the intent's candidate rules, listed: only one blocks
        "Sorry: only 4 seats left, and it is basic economy, booked over 24 hours ago.",
        "I can't: the flight has already departed, and only 4 seats remain.",
        # a false fact: the count is not the world's
        "Sorry, only 3 seats are left.",
        "Sorry, only 3 or 4 seats are left.",
    ],
)
def test_a_refusal_with_a_false_or_inapplicable_claim_fails(message):
    assert not refusal(message).success


# ----- facts told in a dialogue (usersim, tau2) ---------------------------------------------
@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("Call them on +44 1223 238596.", "01223 238596"),
        ("The table is booked for 2:05 PM.", "14:05"),
        ("Your refund of $1,000.00 is on its way.", "1000.00"),
        ("Your reference is HB-12345.", "HB-12345"),
    ],
)
def test_a_fact_told_in_another_format_counts(text, fact):
    assert _said([text], fact)


def test_a_phone_told_in_another_format_is_precise():
    assert precision(["Call +44 1223 238596."], [], ["01223 238596"])[0] == 1.0
    assert precision(["+44 1223 238596 or 01223 111111"], [], ["01223 238596"])[0] == 0.5


def test_tau2_communicate_takes_any_format_and_keeps_tau2s_own_beside():
    said = ["It departs at 2:05 PM, the fare is 60.0."]
    assert told_any_format(said, "14:05") and not told(said, "14:05")
    assert told_any_format(said, "60") and told(said, "60")
    assert not told_any_format(said, "17:45")


# ----- computer: answers in files, refusals, outputs by content ------------------------------
def computer(home, run=None, status=None, reason=""):
    from palaestra.verifiers.computer import ComputerProbe

    def shell(command, timeout):
        env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
        done = subprocess.run(
            ["bash", "-c", command], capture_output=True, text=True, env=env, timeout=timeout
        )
        return done.returncode, done.stdout, done.stderr

    return ComputerProbe(home, run or shell, agent_status=status, last_output={"reason": reason})


@pytest.mark.parametrize(("text", "ok"), [("60", True), ("60.0\n", True), ("60 or 30", False)])
def test_a_file_answer_is_read_in_any_format(tmp_path, text, ok):
    (tmp_path / "total.txt").write_text(text)
    spec = {"kind": "file_answer", "path": "total.txt", "value": "60", "normalize": "number"}
    assert DeclarativeVerifier(spec).verify(computer(tmp_path)).success is ok


@pytest.mark.parametrize(
    ("reason", "ok"),
    [
        ("This computer has no Bluetooth adapter.", True),
        ("There is no Bluetooth hardware here, so nothing to switch off.", True),
        ("I cannot switch off Bluetooth on this computer.", False),  # the instruction's words
        ("Sorry, I cannot do that on this computer.", False),
    ],
)
def test_a_refusal_gives_the_cause_not_the_instructions_words(tmp_path, reason, ok):
    from palaestra.envs.computer.rows import ABSENT

    spec = {
        "kind": "agent_status",
        "status": "fail",
        "reason_mentions": ["bluetooth"],
        "reason_causes": ABSENT,
    }
    probe = computer(tmp_path, status="fail", reason=reason)
    assert DeclarativeVerifier(spec).verify(probe).success is ok


def _archives(home, hollow):
    import tarfile
    import zipfile

    texts = {"project/main.py": "print(1)\n", "project/README": "hi\n"}
    for name, text in texts.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text("" if hollow else text)
    with tarfile.open(home / "backup.tar.gz", "w:gz") as tar:
        tar.add(home / "project", arcname="./project")  # a ./ prefix is the same member
    with zipfile.ZipFile(home / "docs.zip", "w") as z:
        for name in texts:
            z.write(home / name, name)


@pytest.mark.parametrize("hollow", [False, True])
def test_an_archive_is_checked_member_by_member_with_content(tmp_path, hollow):
    from palaestra.envs.computer.rows import members

    _archives(tmp_path, hollow)
    want = {"project/main.py": "print(1)", "project/README": "hi"}
    for archive in ("~/backup.tar.gz", "~/docs.zip"):
        result = DeclarativeVerifier(members(archive, want)).verify(computer(tmp_path))
        assert result.success is not hollow, result.checks[0].detail


def test_a_workbook_is_checked_cell_by_cell(tmp_path):
    import zipfile

    from palaestra.envs.computer.rows import cells

    ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    sheet = (
        f'<worksheet {ns}><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c>'
        '<c r="B1" t="inlineStr"><is><t>b</t></is></c></row>'
        '<row r="2"><c r="A2"><v>1.0</v></c><c r="B2"><v>2</v></c></row></sheetData></worksheet>'
    )
    strings = f"<sst {ns}><si><t>a</t></si></sst>"
    for name, body in (("full", sheet), ("skeleton", f"<worksheet {ns}><sheetData/></worksheet>")):
        with zipfile.ZipFile(tmp_path / f"{name}.xlsx", "w") as z:
            z.writestr("xl/worksheets/sheet1.xml", body)
            z.writestr("xl/sharedStrings.xml", strings)
    want = {"A1": "a", "B1": "b", "A2": "1", "B2": "2"}
    probe = computer(tmp_path)
    assert DeclarativeVerifier(cells("~/full.xlsx", want)).verify(probe).success
    assert not DeclarativeVerifier(cells("~/skeleton.xlsx", want)).verify(probe).success


# ----- tau2-telecom: dual control -------------------------------------------------------------
def test_needless_device_actions_are_the_ones_beyond_the_gold():
    from palaestra.verifiers.tau2 import needless_device_actions

    gold = [{"requestor": "user", "name": "toggle_data"}, {"requestor": "assistant", "name": "x"}]
    diagnosed = [
        {"by": "user", "name": "check_status_bar"},
        {"by": "user", "name": "run_speed_test"},
        {"by": "user", "name": "toggle_data"},
    ]
    assert needless_device_actions(diagnosed, gold) == {}
    fix_all = [
        {"by": "user", "name": n}
        for n in ("toggle_data", "reset_apn_settings", "reseat_sim_card", "reboot_device")
    ]
    assert sum(needless_device_actions(fix_all, gold).values()) == 3
    twice = [{"by": "user", "name": "toggle_data"}] * 3
    assert needless_device_actions(twice, gold) == {"toggle_data": 2}


@pytest.mark.parametrize("domain", ["bank", "calendar", "email", "shop", "train"])
def test_every_generated_infeasible_task_passes_its_own_reason_and_fails_a_stuffed_one(domain):
    """The generator's ``others`` never hold the blocking rule's words (its own message passes
    in any app), and a report of every rule's keywords names one of them."""
    from palaestra.synth_apps.adversaries import rule_keywords
    from palaestra.synth_apps.generate import TaskGenerator
    from palaestra.synth_apps.spec import load_spec

    gen = TaskGenerator(load_spec(domain))
    infeasible = [
        c
        for made in gen.generate(30, seed=3)
        for c in made.task.verifier["checks"]
        if c["kind"] == "infeasible"
    ]
    assert infeasible, f"no infeasible task among {domain}'s 30"
    for check in infeasible:
        assert "others" in check
        said = f" {answers.normalize_text(' '.join(check['keywords']))} "
        assert not [o for o in check["others"] if answers.mentions(said, o)], check
        stuffed = f" {answers.normalize_text(', '.join(rule_keywords()))} "
        assert [o for o in check["others"] if answers.mentions(stuffed, o)] or not check["others"]
