"""palaestra/tau2-v0: tau2's tools and answers, bad input, the tau2 check's terms, the suites,
and both domains end to end through the real gateway."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from palaestra.client import RemoteEnv
from palaestra.envs.tau2 import FAMILY, suites, tasks
from palaestra.envs.tau2.env import Tau2Env
from palaestra.policies import run_episode
from palaestra.tasks import get_suite
from palaestra.verifiers import tau2 as check

RETAIL_CANCEL = "tau2-retail-1"  # gold: look the user up, then cancel a pending order


def task(domain, index=0):
    return suites.tasks(domain)[index]


@pytest.fixture
def env():
    e = Tau2Env()
    yield e
    e.close()


def test_observation_is_tau2s_tools_policy_and_the_users_opening(env):
    obs, info = env.reset(seed=0, options={"task": task("retail", 1)})
    assert env.observation_space.contains(obs)
    tools = {t["function"]["name"]: t["function"] for t in json.loads(obs["tools"])}
    assert tools["cancel_pending_order"]["writes"] and not tools["get_order_details"]["writes"]
    assert "authenticate" in obs["policy"].lower() and obs["user_message"]
    assert "setup" not in info["task"] and "oracle" not in info["task"]
    # the view's metadata is the public part only: tau2's split and native id stay private
    assert info["task"]["metadata"] == {"domain": "retail"}


def test_wrong_tool_calls_answer_as_tau2_and_change_nothing(env):
    env.reset(seed=0, options={"task": task("retail", 1)})
    before = env.state_probe().read()["world"]
    obs, *_ = env.step({"name": "call_tool", "args": {"name": "drop_tables", "arguments": {}}})
    assert obs["last_tool_result"] == "Error: Tool 'drop_tables' not found."
    assert obs["last_action_error"] == ""
    obs, *_ = env.step(
        {"name": "call_tool", "args": {"name": "cancel_pending_order", "arguments": {"x": 1}}}
    )
    assert obs["last_tool_result"].startswith("Error: ") and "'x'" in obs["last_tool_result"]
    obs, *_ = env.step(
        {"name": "call_tool", "args": {"name": "get_order_details", "arguments": "[1]"}}
    )
    assert "must be object" in obs["last_action_error"]
    assert env.state_probe().read()["world"] == before


def test_openai_tool_calls_and_assistant_messages_are_moves(env):
    env.reset(seed=0, options={"task": task("retail", 1)})
    call = {
        "type": "function",
        "id": "call_x",
        "function": {"name": "find_user_id_by_email", "arguments": '{"email": "nobody@x.com"}'},
    }
    obs, *_ = env.step({"role": "assistant", "content": None, "tool_calls": [call]})
    assert obs["last_tool_result"] == "Error: User not found"
    obs, *_ = env.step({"role": "assistant", "content": "How can I help you today?"})
    assert obs["last_action_error"] == "" and obs["user_message"]


def test_a_write_without_the_users_yes_fails_even_when_the_world_is_right(env):
    retail = task("retail", 1)
    run_episode(env, FAMILY.policy("write_unconfirmed"), retail, seed=0)
    result = env.last_verification
    terms = {c.kind: c.passed for c in result.checks}
    assert terms["tau2_db"] and not terms["tau2_rules"] and result.score == 0.0


def test_a_conversation_cut_at_the_turn_limit_scores_zero(env):
    retail = task("retail", 1)
    run_episode(env, FAMILY.policy("write_unconfirmed"), retail, seed=0, max_steps=1)
    result = env.verify()
    assert result.score == 0.0 and "did not end" in result.checks[0].detail


def test_doing_nothing_scores_zero_in_both_domains(env):
    for domain in ("retail", "telecom"):
        run_episode(env, FAMILY.policy("noop"), task(domain, 3), seed=0)
        assert env.last_verification.score == 0.0


def test_the_users_phone_calls_are_logged_for_the_verifier_not_shown(env):
    telecom = task("telecom", 3)
    obs, _ = env.reset(seed=0, options={"task": telecom})
    obs, *_ = env.step(
        {"name": "send_message", "args": {"text": "Please turn off data saver mode on your phone."}}
    )
    calls = env.state_probe().read()["calls"]
    assert [c["name"] for c in calls if c["by"] == "user"][:1] == ["toggle_data_saver_mode"]
    assert "toggle_data_saver_mode" not in obs["conversation"]


def test_action_matching_is_stricter_than_tau2s_where_tau2_is_lenient():
    gold = {"name": "refuel_data", "arguments": {"customer_id": "C1", "gb_amount": 2.0}}
    empty = {"name": "refuel_data", "args": {}}
    assert check.action_matches(gold, empty, lenient=True)  # tau2: no keys, a match
    assert not check.action_matches(gold, empty, lenient=False)
    exact = {"name": "refuel_data", "args": {"customer_id": "C1", "gb_amount": 2.0}}
    assert check.action_matches(gold, exact, lenient=False)
    picked = {**gold, "compare_args": ["customer_id"]}
    assert check.action_matches(
        picked, {"name": "refuel_data", "args": {"customer_id": "C1"}}, lenient=False
    )
    assert check.told(["Your total is $1,302.67."], "1302.67")
    assert not check.told(["Your total is $1302.68."], "1302.67")


class _Judge(BaseHTTPRequestHandler):
    verdicts: list = []

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        content = json.dumps({"verdicts": type(self).verdicts})
        body = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_nl_assertions_are_skipped_without_a_judge_and_judged_with_one(env, monkeypatch):
    with_nl = next(
        t for t in suites.tasks("retail") if t.verifier["nl_assertions"] and t.verifier["actions"]
    )
    monkeypatch.delenv("PALAESTRA_JUDGE_URL", raising=False)
    run_episode(env, FAMILY.policy("noop"), with_nl, seed=0)
    nl = next(c for c in env.last_verification.checks if c.kind == "tau2_nl_assertion")
    assert nl.detail.startswith("skipped") and "PALAESTRA_JUDGE_URL" in nl.detail
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Judge)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("PALAESTRA_JUDGE_URL", f"http://127.0.0.1:{server.server_port}/v1")
        count = len(with_nl.verifier["nl_assertions"])
        _Judge.verdicts = [False] * count
        assert check.judge([{"role": "user", "content": "hi"}], ["a"] * count) == [False] * count
        _Judge.verdicts = [True]
        with pytest.raises(ValueError, match="verdicts"):
            check.judge([{"role": "user", "content": "hi"}], ["a", "b"])
    finally:
        server.shutdown()


def test_a_task_file_that_does_not_parse_names_the_task_and_the_field():
    raw = json.loads(json.dumps(tasks.get("retail", "1")))
    raw["evaluation_criteria"]["reward_basis"] = ["DB", "VIBES"]
    with pytest.raises(
        tasks.TaskFileError, match=r"retail task 1: field 'evaluation_criteria.reward_basis'"
    ):
        tasks.check("retail", raw)
    raw = json.loads(json.dumps(tasks.get("telecom", next(iter(tasks.tasks("telecom"))))))
    raw["evaluation_criteria"]["actions"][0] = {"arguments": {}}
    with pytest.raises(tasks.TaskFileError, match=r"evaluation_criteria.actions\[0\]"):
        tasks.check("telecom", raw)
    with pytest.raises(tasks.TaskFileError, match=r"tasks.json\[3\]: field 'id'"):
        tasks.check("telecom", {"no": "id"}, 3)


def test_suite_tasks_carry_tau2s_splits_and_url_safe_ids():
    for domain, train, test in (("retail", 74, 40), ("telecom", 74, 40)):
        made = suites.tasks(domain)
        splits = [t.metadata["split"] for t in made]
        assert (splits.count("train"), splits.count("test")) == (train, test)
        assert all(t.id.replace("-", "").isalnum() for t in made)


@pytest.mark.parametrize("domain", ["retail", "telecom"])
def test_the_gold_assistant_solves_a_shipped_task_through_the_gateway(gateway, domain):
    shipped = get_suite(f"tau2-{domain}").tasks
    # dropped, with reasons: retail's 7 refusal tasks pass doing nothing and 3 a dump; telecom's
    # 20 single-transfer tasks pass a hand-off at once and 15 device tasks a blind fix-all
    assert len(shipped) >= {"retail": 100, "telecom": 75}[domain]
    chosen = shipped[1]
    env = RemoteEnv(task=f"tau2-{domain}/{chosen.id}", base_url=gateway)
    try:
        policy = FAMILY.policy("tau2_gold", seed=0)
        obs, info = env.reset(seed=0)
        policy.reset(chosen)
        assert "task_id" not in str(info["task"])
        for _ in range(chosen.max_steps):
            obs, reward, terminated, truncated, info = env.step(policy.act(obs, info))
            if terminated or truncated:
                break
        assert terminated and reward == 1.0, obs["conversation"][-2000:]
    finally:
        env.close()


def test_a_tau2_check_with_no_reward_basis_is_an_error_not_a_pass(env):
    retail = task("retail", 1)
    for basis in ([], ["VIBES"]):
        broken = retail.model_copy(update={"verifier": {**retail.verifier, "reward_basis": basis}})
        run_episode(env, FAMILY.policy("tau2_gold"), broken, seed=0)
        result = env.last_verification
        assert not result.success and "reward_basis" in (result.error or ""), result
