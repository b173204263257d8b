"""tau2's LLM user against a loopback OpenAI-compatible endpoint (a test double: scripted
completions, no model runs here)."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from palaestra.envs.runtimes.simuser.user import UserSimError
from palaestra.envs.tau2 import tasks as tt
from palaestra.envs.tau2.env import make_user
from palaestra.envs.tau2.llm_user import GREETING, MAX_TOOL_ROUNDS, LLMUser
from palaestra.envs.tau2.world import open_world
from palaestra.synth_apps.llm import LLMAuthor

MOBILE_DATA = "[mobile_data_issue]data_mode_off|data_usage_exceeded[PERSONA:None]"


class Fake:
    """Answers each request with ``script(body)``: a message dict, or ``(status, raw text)``."""

    def __init__(self, script):
        fake = self
        self.bodies = []
        self.auth = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.bodies.append(body)
                fake.auth.append(self.headers.get("Authorization"))
                out = script(body)
                if isinstance(out, tuple):
                    status, raw = out
                else:
                    status, raw = (
                        200,
                        json.dumps(
                            {
                                "choices": [{"message": {"role": "assistant", **out}}],
                                "usage": {"prompt_tokens": 100, "completion_tokens": 7},
                            }
                        ),
                    )
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(raw.encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def serve():
    started = []

    def start(script):
        fake = Fake(script)
        llm = LLMAuthor(fake.url, key="sk-test", model="user-model", timeout=5)
        started.append((fake, llm))
        return fake, llm

    yield start
    for fake, llm in started:
        llm.close()
        fake.close()


def call(name, arguments="{}", cid="c1"):
    fn = {"name": name, "arguments": arguments}
    return {"content": None, "tool_calls": [{"id": cid, "type": "function", "function": fn}]}


def scripted(*answers):
    queue = list(answers)
    return lambda body: queue.pop(0)


def test_telecom_reply_runs_the_phone_tools_and_feeds_results_back(serve):
    task = tt.tasks("telecom")[MOBILE_DATA]
    fake, llm = serve(
        scripted(
            {"content": "Hi, my mobile data stopped working."},
            call("check_status_bar"),
            {"content": "The status bar says data is disabled. Yes, go ahead."},
            {"content": "It works now, thank you! ###STOP###"},
        )
    )
    user = make_user("telecom", task, seed=7, llm=llm)
    assert isinstance(user, LLMUser)
    world = open_world("telecom", task)
    expected = open_world("telecom", task).call("user", "check_status_bar", {}).content

    assert user.opening() == "Hi, my mobile data stopped working."
    first = fake.bodies[0]
    assert first["model"] == "user-model" and first["seed"] == 7 and first["temperature"] == 0
    assert first["messages"][1] == {"role": "user", "content": GREETING}
    assert "tools" not in first  # nobody has asked for an action yet
    system = first["messages"][0]["content"]
    reason = task["user_scenario"]["instructions"]["reason_for_call"]
    assert reason.split(".")[0] in system and "###STOP###" in system and "tools" in system
    assert fake.auth[0] == "Bearer sk-test"

    turn = user.reply("Could you tell me what your status bar shows?", world)
    assert turn.text == "The status bar says data is disabled. Yes, go ahead."
    assert turn.agreed and not turn.closed
    assert turn.calls == [
        {"name": "check_status_bar", "arguments": {}, "content": expected, "error": False}
    ]
    asked, fed = fake.bodies[1], fake.bodies[2]
    # the agent speaks as "user" to the simulator, the simulator's own lines are "assistant"
    assert [m["role"] for m in asked["messages"]] == ["system", "user", "assistant", "user"]
    names = {t["function"]["name"] for t in asked["tools"]}
    assert "toggle_data" in names and "refuel_data" not in names
    assert all("writes" not in t["function"] for t in asked["tools"])
    assert fed["messages"][-1] == {"role": "tool", "tool_call_id": "c1", "content": expected}
    assert fed["messages"][-2]["tool_calls"][0]["function"]["name"] == "check_status_bar"

    last = user.reply("Great, data is back on. Anything else?", world)
    assert last.closed and last.text == "It works now, thank you!" and not last.calls
    assert user.usage == {
        "calls": 4,
        "prompt_tokens": 400,
        "completion_tokens": 28,
        "unmetered": 0,
    }
    assert len(user.log) == 3 and user.log[1]["calls"] == turn.calls
    assert user.reply("Hello?", world).closed  # over: no further model call
    assert len(fake.bodies) == 4


def test_a_bad_tool_call_answers_an_error_and_the_phone_is_unchanged(serve):
    task = tt.tasks("telecom")[MOBILE_DATA]
    fake, llm = serve(
        scripted(
            call("toggle_data", "{not json"),
            call("set_network_mode_preference", '{"mode": 5}', cid="c2"),
            {"content": "Sorry, that did not work."},
        )
    )
    world = open_world("telecom", task)
    before = json.dumps(world.state(), sort_keys=True, default=str)
    turn = LLMUser("telecom", task, llm, seed=0).reply("Please turn data on.", world)
    assert [c["error"] for c in turn.calls] == [True, True]
    assert "not valid JSON" in turn.calls[0]["content"]
    assert turn.calls[1]["content"].startswith("Error:")
    assert json.dumps(world.state(), sort_keys=True, default=str) == before
    assert fake.bodies[-1]["messages"][-1]["tool_call_id"] == "c2"


def test_tool_rounds_are_bounded_then_text_is_required(serve):
    task = tt.tasks("telecom")[MOBILE_DATA]

    def endless(body):
        if body.get("tool_choice") == "none":
            return {"content": "I have checked a lot of things."}
        return call("check_sim_status", cid=f"c{len(body['messages'])}")

    fake, llm = serve(endless)
    turn = LLMUser("telecom", task, llm).reply("Check everything.", open_world("telecom", task))
    assert len(turn.calls) == MAX_TOOL_ROUNDS
    assert len(fake.bodies) == MAX_TOOL_ROUNDS + 1
    assert turn.text == "I have checked a lot of things."


def test_retail_offers_no_tools_and_transfer_closes(serve):
    task = next(iter(tt.tasks("retail").values()))
    fake, llm = serve(
        scripted(
            {"content": "I want to exchange something."},
            {"content": "Okay, thanks. ###TRANSFER###"},
        )
    )
    user = LLMUser("retail", task, llm)
    user.opening()
    turn = user.reply("I am transferring you to a human agent.", open_world("retail", task))
    assert turn.closed and turn.text == "Okay, thanks."
    assert all("tools" not in b for b in fake.bodies)
    system = fake.bodies[0]["messages"][0]["content"]
    assert "tools" not in system and task["user_scenario"]["instructions"]["known_info"] in system


def test_usage_missing_is_counted_as_unmetered(serve):
    raw = json.dumps({"choices": [{"message": {"role": "assistant", "content": "Hi."}}]})
    _, llm = serve(lambda body: (200, raw))
    user = LLMUser("retail", next(iter(tt.tasks("retail").values())), llm)
    user.opening()
    assert user.usage == {"calls": 1, "prompt_tokens": 0, "completion_tokens": 0, "unmetered": 1}


@pytest.mark.parametrize(
    ("answer", "match"),
    [
        ((500, "internal secret detail"), "answered 500$"),
        ((200, "not json"), "no chat completion"),
        ((200, json.dumps({"choices": []})), "no chat completion"),
        ({"content": None}, "no text"),
    ],
)
def test_endpoint_failures_raise_a_clear_error(serve, answer, match):
    _, llm = serve(lambda body: answer)
    user = LLMUser("retail", next(iter(tt.tasks("retail").values())), llm)
    with pytest.raises(UserSimError, match=match) as err:
        user.opening()
    assert "secret" not in str(err.value)


def test_unreachable_endpoint():
    llm = LLMAuthor("http://127.0.0.1:9/v1", timeout=2)
    user = LLMUser("retail", next(iter(tt.tasks("retail").values())), llm)
    with pytest.raises(UserSimError, match="unreachable"):
        user.opening()
