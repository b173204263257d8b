"""BrowserGym's observation keys from Chrome itself, and the tree keeping script-bound controls.

One MiniWoB env serves every test (tasks switch through the reset options). BrowserGym's own
observation utilities read our objects in the BrowserGym benchmark's virtualenv
(``.venv-browsergym``, built by ``bench/browsergym_baseline.py``); without it that test skips.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

import pytest

from palaestra import registry
from palaestra.client import RemoteEnv
from palaestra.envs.runtimes.axtree import find, parse
from palaestra.envs.web.env import ALL_PARTS, BROWSERGYM_PARTS
from palaestra.envs.web.options import Part, WebOptions
from palaestra.errors import InvalidRequest
from palaestra.options import check_options

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[3]
BG_PYTHON = ROOT / ".venv-browsergym" / "bin" / "python"
#: run in BrowserGym's venv: its utilities over our observation (a JSON file), results as JSON
BG_SCRIPT = """
import json, sys
from browsergym.utils.obs import flatten_axtree_to_str, flatten_dom_to_str, prune_html
obs = json.load(open(sys.argv[1]))
ax, dom = json.loads(obs["axtree_object"]), json.loads(obs["dom_object"])
extra = json.loads(obs["extra_element_properties"])
print(json.dumps({
    "axtree": flatten_axtree_to_str(ax, extra_properties=extra, with_clickable=True),
    "pruned": prune_html(flatten_dom_to_str(dom, extra_properties=extra, with_clickable=True)),
}))
"""


@pytest.fixture(scope="module")
def env() -> Iterator:
    env = registry.make("palaestra/web-v0", task="miniwob/email-inbox", observe=ALL_PARTS)
    yield env
    env.close()


@pytest.fixture(scope="module")
def opened(env) -> dict:
    """email-inbox (seed 0) with the first email opened: its trash, star, reply, forward."""
    obs, _ = env.reset(seed=0, options={"task": "miniwob/email-inbox"})
    row = next(n for n in parse(obs["axtree"]) if "clickable" in n.props and n.name)
    obs, *_ = env.step(f"click({row.bid!r})")
    assert obs["last_action_error"] == ""
    return obs


def test_tree_keeps_listener_bound_icons(opened) -> None:
    nodes = parse(opened["axtree"])
    hints = {n.props.get("hint") for n in nodes if "clickable" in n.props}
    assert {"trash", "star", "close-email"} <= hints
    assert find(nodes, None, "Reply") and find(nodes, None, "Forward")
    # the goal's sentence keeps the text of its bold spans
    assert any(n.name.startswith("Find the email by ") and '"' in n.name for n in nodes)


def test_browsergym_keys(env, opened) -> None:
    assert set(BROWSERGYM_PARTS) <= set(opened)
    assert env.observation_space.contains(opened)
    ax = json.loads(opened["axtree_object"])
    extra = json.loads(opened["extra_element_properties"])
    marked = {n["browsergym_id"] for n in ax["nodes"] if "browsergym_id" in n}
    tree_bids = {n.bid for n in parse(opened["axtree"]) if n.bid}
    assert marked & tree_bids and marked <= set(extra)  # the same ids as the text tree
    trash = next(n.bid for n in parse(opened["axtree"]) if n.props.get("hint") == "trash")
    assert extra[trash]["clickable"] and extra[trash]["visibility"] > 0
    assert json.loads(opened["goal_object"])[0]["type"] == "text"
    assert json.loads(opened["chat_messages"])[0]["role"] == "user"
    assert json.loads(opened["open_pages_urls"])[opened["active_page_index"][0]] == opened["url"]
    assert opened["last_action"].startswith("click(")


def test_unknown_observe_key_names_the_known_ones() -> None:
    with pytest.raises(InvalidRequest) as err:
        check_options(WebOptions, {"observe": ["a11y_tree"]}, None)
    assert "options.observe" in str(err.value) and "axtree_object" in str(err.value)
    check_options(WebOptions, {"observe": list(ALL_PARTS)}, None)


def test_span_links_read_as_links(env) -> None:
    obs, _ = env.reset(seed=1, options={"task": "miniwob/click-link"})
    word = obs["goal"].split('"')[1]
    assert find(parse(obs["axtree"]), "link", word)


@pytest.mark.skipif(not BG_PYTHON.exists(), reason="no .venv-browsergym (make setup builds it)")
def test_browsergym_utilities_read_our_observation(opened, tmp_path) -> None:
    dump = tmp_path / "obs.json"
    dump.write_text(json.dumps({k: opened[k] for k in ("axtree_object", "dom_object",
                                                       "extra_element_properties")}))  # fmt: skip
    done = subprocess.run(
        [str(BG_PYTHON), "-c", BG_SCRIPT, str(dump)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    trash = next(n.bid for n in parse(opened["axtree"]) if n.props.get("hint") == "trash")
    assert f"[{trash}] " in out["axtree"] and "clickable" in out["axtree"]
    assert f'bid="{trash}"' in out["pruned"] and "Reply" in out["pruned"]


def test_over_the_gateway_structured(gateway) -> None:
    """A remote client gets the objects as JSON values; a key the family lacks is a 422."""
    parts = ["axtree_object", "extra_element_properties", "active_page_index", "chat_messages"]
    env = RemoteEnv(
        task="miniwob/click-button", base_url=gateway, options={"observe": parts}, structured=True
    )
    try:
        obs, _ = env.reset(seed=0)
        assert isinstance(obs["axtree_object"]["nodes"], list)
        assert isinstance(obs["extra_element_properties"], dict)
        assert obs["chat_messages"][0]["role"] == "user" and obs["active_page_index"][0] == 0
    finally:
        env.close()
    with pytest.raises(InvalidRequest, match="dom_object"):
        RemoteEnv(task="miniwob/click-button", base_url=gateway, options={"observe": ["a11y"]})


def test_focused_element_bid(env) -> None:
    obs, _ = env.reset(seed=0, options={"task": "miniwob/enter-text"})
    box = find(parse(obs["axtree"]), "textbox")[0]
    obs, *_ = env.step(f"click({box.bid!r})")
    assert obs["focused_element_bid"] == box.bid


def test_the_options_model_lists_every_part() -> None:
    """The options' ``Part`` is the one list; the env splits it into the lean default (first)
    and BrowserGym's keys, whose CDP objects come first."""
    from palaestra.envs.web.env import CDP_PARTS, PARTS

    assert get_args(Part) == ALL_PARTS and ALL_PARTS[: len(PARTS)] == PARTS
    assert BROWSERGYM_PARTS[: len(CDP_PARTS)] == CDP_PARTS
