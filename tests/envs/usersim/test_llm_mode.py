"""The optional LLM mode against a loopback OpenAI-compatible endpoint (a test double)."""

import json
import time

import pytest

from palaestra.envs.runtimes.simuser.user import UserSimError
from palaestra.envs.usersim.env import UserSimEnv
from palaestra.envs.usersim.suites import generate
from tests.llm_stub import Stub

TASK = next(t for t in generate("airline") if t.metadata["intent"] == "cancel")
RID = TASK.setup["goal"]["facts"]["reservation_id"]


def model(invent=False):
    def answer(messages):
        system, text = messages[0]["content"], messages[-1]["content"]
        if "dialogue acts" in system:
            return json.dumps([{"kind": "request", "slot": "reservation_id"}])
        if invent:
            return f"It's {RID}, or maybe QQ12RT."
        return f"Sure thing, here it is: {RID}." if RID in text else "Hmm, okay then."

    return answer


def ask(env):
    env.reset(seed=0, options={"task": TASK})
    obs, *_ = env.step('send_message("Could you tell me your reservation number?")')
    return obs["user_message"]


def test_llm_reads_and_words_when_the_tracker_accepts():
    stub = Stub(model())
    try:
        env = UserSimEnv(persona="terse", llm_url=stub.url)
        assert ask(env) == f"Sure thing, here it is: {RID}."
        assert len(stub.requests) == 2  # one reading, one wording
    finally:
        stub.close()


def test_llm_wording_that_invents_is_replaced_by_the_template():
    stub = Stub(model(invent=True))
    try:
        reply = ask(UserSimEnv(persona="terse", llm_url=stub.url))
        assert RID in reply and "QQ12RT" not in reply
    finally:
        stub.close()


def test_a_slow_or_dead_endpoint_falls_back_to_rules_or_fails_clearly():
    def slow(messages):
        time.sleep(1.5)
        return "[]"

    stub = Stub(slow)
    try:
        env = UserSimEnv(persona="terse", llm_url=stub.url, llm_timeout=0.3)
        assert RID in ask(env)  # rules answered
    finally:
        stub.close()
    dead = UserSimEnv(persona="terse", llm_url="http://127.0.0.1:9/v1", llm_fallback="error")
    dead.reset(seed=0, options={"task": TASK})
    with pytest.raises(UserSimError, match="unreachable"):
        dead.step('send_message("Could you tell me your reservation number?")')
