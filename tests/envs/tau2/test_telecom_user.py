"""The symbolic telecom user (acts on its phone, grounded, agrees only to its goal) and the gold
assistant that plays every telecom task through ``palaestra/tau2-v0`` with it."""

from __future__ import annotations

import re

import pytest

from palaestra.envs.runtimes.simuser.acts import user_agrees
from palaestra.envs.tau2 import suites, tasks
from palaestra.envs.tau2.env import Tau2Env
from palaestra.envs.tau2.gold import GoldAssistant
from palaestra.envs.tau2.telecom_gold import instruction
from palaestra.envs.tau2.telecom_reader import Instruction, Unclear, read_device
from palaestra.envs.tau2.telecom_user import TelecomUser
from palaestra.envs.tau2.world import open_world
from palaestra.policies import run_episode

IDS = list(tasks.tasks("telecom"))
MESSAGING = ["messaging", "browser"]


def _task(fragment: str) -> dict:
    return tasks.get("telecom", next(i for i in IDS if fragment in i))


def _user(fragment: str) -> tuple[TelecomUser, object]:
    task = _task(fragment)
    return TelecomUser(task, 0), open_world("telecom", task)


def _device(world) -> dict:
    return world.state()["user"]["device"]


@pytest.fixture(scope="module")
def env():
    made = Tau2Env()
    yield made
    made.close()


# one task of each kind: data + refuel, service with a bill, a transfer, MMS with roaming
SAMPLE = [
    "[mobile_data_issue]data_mode_off|data_usage_exceeded[PERSONA:None]",
    "[service_issue]airplane_mode_on|break_apn_settings|overdue_bill_suspension|unseat_sim_card",
    "[service_issue]break_apn_settings|lock_sim_card_pin[PERSONA:None]",
    "[mms_issue]bad_network_preference|bad_wifi_calling|break_apn_mms_setting|break_app_storage",
    "[mobile_data_issue]bad_network_preference|bad_vpn|user_abroad_roaming_disabled_off",
]


@pytest.mark.parametrize("fragment", SAMPLE)
def test_gold_with_the_symbolic_user_scores_one_on_every_seed(env, fragment):
    task = next(t for t in suites.tasks("telecom") if t.setup["task_id"].startswith(fragment))
    for seed in (0, 1):
        episode = run_episode(env, GoldAssistant(), task, seed=seed)
        assert episode.reward == 1.0, env.last_verification
    log = env.episode.user.log
    assert log and not any(entry["unread"] for entry in log)
    for entry in log:  # its words say yes exactly when it agrees (what a judge reads)
        assert ("agree" in entry["said"]) == (user_agrees(entry["text"]) is True), entry
    for entry in log:  # what the phone shows is said only in a reply that looked at it
        if re.search(r"Status Bar|Mbps|MMS messages|Permission .|request for bill", entry["text"]):
            assert entry["calls"], entry


def test_doing_nothing_fails(env):
    task = suites.tasks("telecom")[0]
    from palaestra.policies import ConstantPolicy

    episode = run_episode(env, ConstantPolicy({"name": "end_conversation", "args": {}}), task)
    assert episode.reward == 0.0


def test_a_user_who_does_not_give_the_phone_number_fails_the_gold(env, monkeypatch):
    monkeypatch.setattr(TelecomUser, "_fact", lambda self, slot: "I'd rather not say.")
    task = suites.tasks("telecom")[0]
    assert run_episode(env, GoldAssistant(), task, seed=0).reward == 0.0


def test_opening_is_the_problem_in_first_person_without_hidden_instructions():
    for fragment in ("[mobile_data_issue]", "[service_issue]", "[mms_issue]"):
        user, _ = _user(fragment)
        text = user.opening()
        assert text.startswith(("My ", "I ")), text
        assert "refuel" not in text and "frustration" not in text and "You" not in text


def test_identity_answers_come_from_the_scenario():
    user, world = _user("user_abroad_roaming_enabled_off")
    turn = user.reply("Could you tell me the phone number on your account?", world)
    assert "555-123-2002" in turn.text and not turn.calls
    turn = user.reply("Are you currently travelling abroad?", world)
    assert "abroad in France" in turn.text
    assert user.reply("What is your full name?", world).text == "My name is John Smith."


def test_asked_what_is_wrong_it_states_its_problem_and_never_makes_up_a_fact():
    user, world = _user("[mobile_data_issue]data_mode_off|data_usage_exceeded[PERSONA:None]")
    assert user.reply("Hello! How can I help you today?", world).text == user.opening()
    turn = user.reply("What is your customer ID and your date of birth?", world)
    assert "can't give you my customer ID" in turn.text and "date of birth" in turn.text
    assert not re.search(r"\d", turn.text) and not user.log[-1]["unread"]
    for question in ("What is your passport number?", "What is your mother's maiden name?"):
        text = user.reply(question, world).text
        assert text.startswith("Sorry, I can't give you my") and "John" not in text, text
        assert not re.search(r"\d", text)


def test_an_instruction_becomes_the_device_call_and_the_reply_reports_its_result():
    user, world = _user("[mobile_data_issue]airplane_mode_on|data_mode_off[PERSONA:None]")
    turn = user.reply("Please turn off airplane mode on your phone.", world)
    assert [c["name"] for c in turn.calls] == ["toggle_airplane_mode"]
    assert turn.calls[0]["content"].splitlines()[0] in turn.text  # grounded, never invented
    assert _device(world)["airplane_mode"] is False
    # already off: not flipped back on
    turn = user.reply("Can you switch airplane mode off?", world)
    assert not turn.calls and "already off" in turn.text
    assert _device(world)["airplane_mode"] is False
    turn = user.reply("Next, enable mobile data.", world)
    assert [c["name"] for c in turn.calls] == ["toggle_data"]
    assert _device(world)["data_enabled"] is True


def test_checks_run_the_matching_tool():
    user, world = _user("[mobile_data_issue]airplane_mode_on|data_mode_off[PERSONA:None]")
    asks = {
        "What does your status bar show?": "check_status_bar",
        "Could you check your network mode preference?": "check_network_mode_preference",
        "Please check the status of your SIM card.": "check_sim_status",
        "Can you look at your APN settings?": "check_apn_settings",
        "Is your VPN connected?": "check_vpn_status",
        "Please check the permissions of the messaging app.": "check_app_permissions",
        "Is Wi-Fi calling turned on?": "check_wifi_calling_status",
        "Is data saver mode on?": "check_data_restriction_status",
    }
    for message, tool in asks.items():
        turn = user.reply(message, world)
        assert [c["name"] for c in turn.calls] == [tool], message
        assert turn.calls[0]["content"].splitlines()[0] in turn.text


@pytest.mark.parametrize(
    ("message", "tool", "args"),
    [
        ("Please set the network mode to LTE/5G.", "set_network_mode_preference",
         {"mode": "4g_5g_preferred"}),
        ("Change your preferred network type to 4G only.", "set_network_mode_preference",
         {"mode": "4g_only"}),
        ("Please use set_network_mode_preference with 4g_5g_preferred.",
         "set_network_mode_preference", {"mode": "4g_5g_preferred"}),
        ("Please remove the SIM card and reinsert it.", "reseat_sim_card", {}),
        ("Reset your APN settings to default.", "reset_apn_settings", {}),
        ("Now restart your device.", "reboot_device", {}),
        ("Please disconnect from the VPN.", "disconnect_vpn", {}),
        ("Grant the messaging app permission to access storage.", "grant_app_permission",
         {"app_name": "messaging", "permission": "storage"}),
        ("Please allow SMS for the Messages app.", "grant_app_permission",
         {"app_name": "messaging", "permission": "sms"}),
        ("Please run toggle_airplane_mode().", "toggle_airplane_mode", {}),
        ("Please run a speed test.", "run_speed_test", {}),
        ("Try sending a picture message now.", "can_send_mms", {}),
    ],
)  # fmt: skip
def test_the_lexicon_maps_instructions_to_tools(message, tool, args):
    got = read_device(message, MESSAGING)
    assert [(g.tool, g.arguments) for g in got if isinstance(g, Instruction)] == [(tool, args)]


@pytest.mark.parametrize(
    ("message", "steps"),
    [
        ("It looks like Airplane Mode is ON. Please turn it off, then let me know what your "
         "status bar shows.", [("toggle_airplane_mode", "off"), ("check_status_bar", None)]),
        ("Please toggle airplane mode off and then back on.",
         [("toggle_airplane_mode", "off"), ("toggle_airplane_mode", "on")]),
        ("Please reset your APN settings and then reboot your device.",
         [("reset_apn_settings", None), ("reboot_device", None)]),
        ("Your VPN seems slow. Please disconnect it.", [("disconnect_vpn", None)]),
        ("Can you check if you have received a payment request and accept it?",
         [("check_payment_request", None), ("make_payment", None)]),
        ("Please go to Settings > Mobile Data and make sure it's turned on.",
         [("toggle_data", "on")]),
        ("Can you tell me what network mode your phone is set to?",
         [("check_network_mode_preference", None)]),
        ("I will enable roaming on your line.", []),
        ("Roaming needs to be enabled on your line L1002.", []),
        ("Your phone is set to 2G only.", []),
        ("Please try these steps:\n1. Turn off Airplane Mode.\n2. Turn on Mobile Data.",
         [("toggle_airplane_mode", "off"), ("toggle_data", "on")]),
        ("- **Airplane Mode**: turn it OFF\n- **Data Saver**: make sure it is off",
         [("toggle_airplane_mode", "off"), ("toggle_data_saver_mode", "off")]),
        ("Would you mind disabling Wi-Fi calling?", [("toggle_wifi_calling", "off")]),
        ("Let's get mobile data switched on.", [("toggle_data", "on")]),
    ],
)  # fmt: skip
def test_steps_keep_their_order_and_pronouns_their_setting(message, steps):
    got = [d.to_json() for d in read_device(message, MESSAGING)]
    assert [(g["tool"], g.get("want")) for g in got] == steps


def test_unclear_instructions_are_asked_back_and_logged_unread():
    user, world = _user("[mobile_data_issue]airplane_mode_on|data_mode_off[PERSONA:None]")
    before = world.state()
    for message in ("Please change your network mode.", "Please grant the permission."):
        assert isinstance(read_device(message, MESSAGING)[0], Unclear)
        turn = user.reply(message, world)
        assert not turn.calls and "not sure" in turn.text and user.log[-1]["unread"]
    assert user.reply("Hmm?", world).calls == []
    assert world.state() == before


def test_agrees_only_to_its_goal():
    user, world = _user("[mobile_data_issue]data_mode_off|data_usage_exceeded[PERSONA:None]")
    assert not user.reply("I can add 5 GB of data for $10.00. Shall I go ahead?", world).agreed
    assert user.reply("I can add 2.0 GB of data for $4.00. Shall I go ahead?", world).agreed
    assert not user.reply("Would you like me to change you to a bigger plan?", world).agreed
    assert not user.reply("I'd recommend changing your plan. Shall I?", world).agreed
    assert not user.reply("Shall I suspend your line?", world).agreed
    assert not user.reply("Shall I enable roaming on your line?", world).agreed  # at home
    assert (
        "No payment request"
        not in user.reply(  # a proposal, not a look at the phone
            "Your bill is overdue. Please confirm that I should send you a payment request.", world
        ).text
    )
    both = user.reply("Shall I add 2 GB of data and enable roaming on your line?", world)
    assert not both.agreed and "travelling" in both.text  # one unwanted write spoils the yes
    pick = user.reply("I can add 2 GB of data, or change your plan. Which do you prefer?", world)
    assert pick.agreed and "2 GB" in pick.text and "plan" not in pick.text
    asked = user.reply("How much data would you like to add?", world)
    assert "2 GB" in asked.text and not asked.agreed and not asked.calls


def test_closes_only_when_its_own_check_shows_the_goal():
    user, world = _user("[mobile_data_issue]data_mode_off|data_usage_exceeded[PERSONA:None]")
    turn = user.reply("Please run a speed test.", world)  # a diagnosis: reported, no complaint
    assert not turn.closed and turn.text == "I ran a speed test: Speed test failed: No Connection."
    turn = user.reply("That should fix it.", world)  # verifies by itself, still broken
    assert [c["name"] for c in turn.calls] == ["run_speed_test"] and not turn.closed
    assert "frustrating" in turn.text  # once, after the first failed attempt
    assert "frustrating" not in user.reply("It should work now.", world).text
    user.reply("Please turn mobile data on.", world)
    world.call("assistant", "refuel_data", {"customer_id": "C1001", "line_id": "L1002",
                                            "gb_amount": 2.0})  # fmt: skip
    turn = user.reply("Is there anything else I can help you with?", world)
    assert turn.closed and "Excellent" in turn.text


def test_a_bare_question_naming_a_write_on_the_line_is_a_proposal():
    user, world = _user("bad_vpn|data_saver_mode_on|user_abroad_roaming_disabled_on")
    turn = user.reply("Roaming is off on your line L1002. Enable roaming on your line?", world)
    assert turn.agreed and not turn.calls


def test_the_anxious_persona_worries_once_in_words_only():
    fragment = "[service_issue]airplane_mode_on|break_apn_settings[PERSONA:Hard]"
    user, world = _user(fragment)
    first = user.reply("Please reset your APN settings.", world)
    second = user.reply("Please restart your phone.", world)
    assert first.text.startswith("Oh dear") and "Oh dear" not in second.text
    assert [c["name"] for c in first.calls + second.calls] == [
        "reset_apn_settings",
        "reboot_device",
    ]


def test_a_transfer_closes():
    user, world = _user("break_apn_settings|lock_sim_card_pin[PERSONA:None]")
    turn = user.reply("YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON.", world)
    assert turn.closed and not turn.calls


def test_gold_instructions_are_words_not_tool_names():
    seen = set()
    for task in tasks.tasks("telecom").values():
        for action in tasks.gold_actions(task):
            if action["requestor"] == "user":
                text = instruction(action["name"], action["arguments"], True)
                assert "_" not in text, text
                seen.add(action["name"])
    assert len(seen) == 12
