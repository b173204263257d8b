"""A hostile API client against session options, through the real gateway.

The client is the attacker: every option that would widen an episode (sandbox limits, an
unbounded viewport, an outbound endpoint, credentials, a step budget above the task's) is a
422 naming the field, refused before any worker is touched. The operator's endpoints are an
allow-list; a failing endpoint's body is never echoed; the operator's LLM key never reaches a
recording, a log line or an error.
"""

from __future__ import annotations

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from palaestra.family import families
from palaestra.options import EnvOptions, options_model
from palaestra.recording import SessionRecorder
from palaestra.redaction import RedactingFilter, Redactor
from palaestra.server.runner import gateway_thread
from palaestra.server.settings import Settings
from tests.conftest import BENCH_ENV
from tests.llm_stub import Stub

PROBLEM = "application/problem+json"
LLM_KEY = "sk-operator-SECRET-7f3a9c1e5b"
REMOTE_SECRET = "REMOTE-BODY-SECRET-d41d8cd9"


class Tarpit:
    """A loopback HTTP server that answers every request 500 with a secret-looking body, and
    counts the requests (an endpoint a client must never make a worker call)."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _answer(self) -> None:
                outer.requests.append(f"{self.command} {self.path}")
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                body = f"internal error; token={REMOTE_SECRET}".encode()
                self.send_response(500)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_DELETE = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def tarpit():
    server = Tarpit()
    yield server
    server.close()


@pytest.fixture
def http(gateway):
    with httpx.Client(base_url=gateway, timeout=60) as client:
        yield client


def _refused(reply: httpx.Response, field: str) -> dict:
    assert reply.status_code == 422, reply.text
    assert reply.headers["content-type"].startswith(PROBLEM)
    body = reply.json()
    assert body["field"] == field or body["field"].startswith(field + "."), body
    return body


# ----- every family declares what a client may set ---------------------------------------------
@pytest.mark.parametrize("name", sorted(families()))
def test_every_family_declares_a_bounded_options_model(name):
    fam = families()[name]
    assert fam.options, f"family {name} declares no client options model"
    for spec in fam.envs:
        model = options_model(spec)
        assert issubclass(model, EnvOptions)
        assert model.model_config.get("extra") == "forbid"


def _env_ids():
    return [spec.id for fam in families().values() for spec in fam.envs]


@pytest.mark.parametrize("env", _env_ids())
def test_an_unknown_option_is_422_naming_it_for_every_env(http, env):
    reply = http.post("/v1/sessions", json={"env": env, "options": {"no_such_option": 1}})
    body = _refused(reply, "options.no_such_option")
    assert "no_such_option" in body["detail"]


# ----- the findings: options that widened an episode ------------------------------------------
ATTACKS = [
    pytest.param(
        "palaestra/computer-v0",
        {"limits": {"nproc": 5000, "fsize_mb": 100_000, "memory_mb": 16_000}},
        "options.limits",
        id="computer-limits",
    ),
    pytest.param("palaestra/web-v0", {"viewport": [6000, 6000]}, "options.viewport", id="viewport"),
    pytest.param(
        "palaestra/web-v0", {"viewport": [100_000, 100_000]}, "options.viewport", id="viewport-huge"
    ),
    pytest.param(
        "palaestra/web-v0", {"viewport": [10, 10]}, "options.viewport", id="viewport-tiny"
    ),
    pytest.param(
        "palaestra/computer-v0", {"width": 100_000}, "options.width", id="computer-screen"
    ),
    pytest.param(
        "palaestra/mobile-v0",
        {"capabilities": {"app": "http://127.0.0.1:1/x.apk"}},
        "options.capabilities",
        id="appium-capabilities",
    ),
    pytest.param(
        "palaestra/usersim-v0", {"llm_model": "gpt-4-32k"}, "options.llm_model", id="llm-model"
    ),
    pytest.param(BENCH_ENV, {"max_steps": 0}, "options.max_steps", id="max-steps-zero"),
    pytest.param(BENCH_ENV, {"image_format": "bmp"}, "options.image_format", id="image-format"),
]


@pytest.mark.parametrize(("env", "options", "field"), ATTACKS)
def test_an_option_that_widens_an_episode_is_422(http, env, options, field):
    _refused(http.post("/v1/sessions", json={"env": env, "options": options}), field)


def test_a_client_cannot_point_a_worker_at_an_appium_server(http, tarpit):
    before = len(tarpit.requests)
    for options in ({"backend": "appium", "appium_url": tarpit.url}, {"appium_url": tarpit.url}):
        reply = http.post("/v1/sessions", json={"env": "palaestra/mobile-v0", "options": options})
        _refused(reply, "options.appium_url")
        assert REMOTE_SECRET not in reply.text
    assert len(tarpit.requests) == before, "the worker called the client's endpoint"


def test_a_gateway_without_an_appium_server_refuses_the_appium_backend(http, tarpit):
    reply = http.post(
        "/v1/sessions", json={"env": "palaestra/mobile-v0", "options": {"backend": "appium"}}
    )
    _refused(reply, "options")
    assert "Appium" in reply.json()["detail"]


def test_a_client_cannot_name_an_llm_endpoint_or_key(http):
    stub = Stub(lambda messages: "hello")
    try:
        for options in (
            {"llm_url": stub.url},
            {"llm_url": stub.url, "llm_key": "sk-client"},
            {"llm_key": "sk-client"},
        ):
            reply = http.post(
                "/v1/sessions", json={"env": "palaestra/usersim-v0", "options": options}
            )
            body = _refused(reply, "options")
            assert body["field"] in {f"options.{name}" for name in options}
            assert "sk-client" not in reply.text
        assert stub.requests == [], "the worker called the client's endpoint"
    finally:
        stub.close()


@pytest.mark.parametrize("via", ["sessions", "pools"])
def test_max_steps_above_the_tasks_is_422(http, via):
    task = "palaestra-bench/count-to-3"  # max_steps 20
    body = {"task": task, "options": {"max_steps": 1000}}
    if via == "pools":
        body["size"] = 2
    reply = http.post(f"/v1/{via}", json=body)
    assert "1000" in _refused(reply, "options.max_steps")["detail"]


def test_valid_options_still_work_and_max_steps_lowers_the_budget(http):
    body = {"task": "palaestra-bench/count-to-3", "options": {"max_steps": 2, "image_size": 16}}
    reply = http.post("/v1/sessions", json=body)
    assert reply.status_code == 201, reply.text
    sid = reply.json()["session_id"]
    try:
        obs = http.post(f"/v1/sessions/{sid}/reset", json={"seed": 0}).json()["observation"]
        assert obs["screenshot"]["shape"] == [16, 16, 3]
        first = http.post(f"/v1/sessions/{sid}/step", json={"action": "add(1)"}).json()
        second = http.post(f"/v1/sessions/{sid}/step", json={"action": "add(1)"}).json()
        assert not first["truncated"] and second["truncated"]
    finally:
        http.delete(f"/v1/sessions/{sid}")


@pytest.mark.parametrize("via", ["sessions", "pools"])
@pytest.mark.parametrize(
    "options", [{"max_steps": 1000}, {"llm_key": "sk-client"}, {"limits": {"nproc": 5000}}]
)
def test_constructor_options_cannot_be_smuggled_in_through_reset(http, via, options):
    """Reset options take only a task: a constructor option sent there is a 422 naming
    ``options``, and the session (or pool) goes on with its own budget."""
    body: dict = {"task": "palaestra-bench/count-to-3"}
    if via == "pools":
        body["size"] = 2
    made = http.post(f"/v1/{via}", json=body)
    assert made.status_code == 201, made.text
    rid = made.json()["pool_id" if via == "pools" else "session_id"]
    try:
        reply = http.post(f"/v1/{via}/{rid}/reset", json={"seed": 0, "options": options})
        _refused(reply, "options")
        assert "sk-client" not in reply.text
        assert http.post(f"/v1/{via}/{rid}/reset", json={"seed": 0}).status_code == 200
    finally:
        http.delete(f"/v1/{via}/{rid}")


def test_a_reset_task_cannot_raise_the_budget_past_its_own():
    """A session made without a task may set max_steps up to the field's bound; a task
    switched in at reset still ends at its own budget."""
    from palaestra import registry

    env = registry.make(BENCH_ENV, max_steps=500)
    env.reset(options={"task": "palaestra-bench/count-to-3"})
    assert env.unwrapped.max_steps == 20


# ----- the operator's endpoints and secrets ---------------------------------------------------
def _dialogue_model(messages):
    system = messages[0]["content"]
    if "dialogue acts" in system:
        return json.dumps([{"kind": "request", "slot": "reservation_id"}])
    return "Hmm, okay then."


@pytest.fixture(scope="module")
def operator_gateway(tmp_path_factory, tarpit):
    """A gateway whose operator configured an LLM (with a key) and an Appium server (the
    tarpit, which fails), both on the outbound allow-list."""
    stub = Stub(_dialogue_model)
    runs = tmp_path_factory.mktemp("operator-runs")
    settings = Settings(
        workers=1,
        runs_dir=runs,
        step_timeout_s=30.0,
        outbound_allow=[stub.url, tarpit.url],
        llm_url=stub.url,
        llm_key=LLM_KEY,
        appium_url=tarpit.url,
        appium_capabilities={"platformName": "Fake"},
    )
    try:
        with gateway_thread(settings) as url:
            yield url, runs, stub
    finally:
        stub.close()


def test_the_operators_llm_key_is_used_but_never_recorded(operator_gateway):
    url, runs, stub = operator_gateway
    with httpx.Client(base_url=url, timeout=60) as http:
        task = next(
            t["id"]
            for t in http.get("/v1/suites/usersim/tasks").json()["tasks"]
            if t["id"].startswith("airline")
        )
        reply = http.post(
            "/v1/sessions", json={"task": f"usersim/{task}", "options": {"user": "llm"}}
        )
        assert reply.status_code == 201, reply.text
        sid = reply.json()["session_id"]
        http.post(f"/v1/sessions/{sid}/reset", json={"seed": 0}).raise_for_status()
        step = http.post(
            f"/v1/sessions/{sid}/step",
            json={"action": 'send_message("Could you tell me your reservation number?")'},
        )
        step.raise_for_status()
        assert LLM_KEY not in step.text and LLM_KEY not in reply.text
        http.delete(f"/v1/sessions/{sid}")
        assert LLM_KEY not in http.get("/v1/health").text
    assert stub.requests, "the operator's LLM was not called"
    assert all(auth == f"Bearer {LLM_KEY}" for _, auth, _ in stub.requests)
    files = [p for p in Path(runs).rglob("*") if p.is_file()]
    assert any(p.name == "session.json" for p in files)
    for path in files:
        assert LLM_KEY.encode() not in path.read_bytes(), f"the LLM key is in {path}"
    meta = json.loads(next(p for p in files if p.name == "session.json").read_text())
    assert meta["options"] == {"user": "llm"}


def test_a_failing_appium_servers_body_is_not_echoed(operator_gateway, tarpit):
    url, _, _ = operator_gateway
    before = len(tarpit.requests)
    with httpx.Client(base_url=url, timeout=60) as http:
        reply = http.post(
            "/v1/sessions", json={"env": "palaestra/mobile-v0", "options": {"backend": "appium"}}
        )
    assert len(tarpit.requests) > before, "the operator's Appium server was not called"
    assert reply.status_code >= 400
    assert reply.headers["content-type"].startswith(PROBLEM)
    assert REMOTE_SECRET not in reply.text
    assert tarpit.url in reply.json()["detail"]  # the endpoint is named


def test_an_endpoint_off_the_allow_list_is_refused_at_start(tarpit):
    for endpoint in ({"appium_url": tarpit.url}, {"llm_url": tarpit.url + "/v1"}):
        with pytest.raises(ValidationError, match="outbound_allow"):
            Settings(**endpoint, outbound_allow=["http://127.0.0.1:1"])
    with pytest.raises(ValidationError) as err:
        Settings(llm_url="http://203.0.113.9/v1", llm_key=LLM_KEY)
    assert LLM_KEY not in str(err.value)


def test_outbound_errors_name_the_endpoint_and_status_only(tarpit):
    from palaestra.envs.mobile.appium_phone import AppiumPhone
    from palaestra.envs.mobile.phone import PhoneError
    from palaestra.synth_apps.llm import LLMAuthor, LLMError

    with pytest.raises(LLMError) as llm:
        LLMAuthor(tarpit.url + "/v1", LLM_KEY, timeout=10).chat("system", "user")
    assert "500" in str(llm.value) and REMOTE_SECRET not in str(llm.value)
    assert LLM_KEY not in str(llm.value)
    with pytest.raises(PhoneError) as phone:
        AppiumPhone(tarpit.url, {"platformName": "Fake"})
    assert tarpit.url in str(phone.value) and REMOTE_SECRET not in str(phone.value)


# ----- redaction where secrets could leak ----------------------------------------------------
def test_a_recording_redacts_secrets_by_value_and_by_field_name(tmp_path):
    recorder = SessionRecorder(
        tmp_path,
        "s1",
        {"options": {"llm_key": "sk-by-name", "api_token": "t0k", "key": "Enter"}},
        secrets=[LLM_KEY],
    )
    recorder.reset(0, {"observation": {"text": f"the key is {LLM_KEY}"}, "info": {}})
    recorder.note("error", error={"detail": f'header "Bearer {LLM_KEY}"'})
    recorder.close()
    data = b"".join(p.read_bytes() for p in (tmp_path / "s1").iterdir() if p.is_file())
    for secret in (LLM_KEY, "sk-by-name", "t0k"):
        assert secret.encode() not in data
    assert b"Enter" in data  # a key press is not a credential


def test_log_lines_redact_the_operators_secrets():
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "calling with %s", (LLM_KEY,), None)
    RedactingFilter(Redactor([LLM_KEY])).filter(record)
    assert LLM_KEY not in record.getMessage()
