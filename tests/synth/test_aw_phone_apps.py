"""The replicas of the phone's own AndroidWorld apps (Contacts, Simple SMS Messenger, Settings,
Clock, Retro Music, VLC, OsmAnd): every template grounds for seeds 0-2 (and its ask variant),
and each verifier expects the end state AndroidWorld's own check reads (the SMS sent to the
right number with the right text, the switch flipped from the state planted, the songs in the
order given, the timer set but not started). No browser: the verifiers' SQL is read as data."""

from __future__ import annotations

import pytest

from palaestra.synth_apps.generate import TaskGenerator
from palaestra.synth_apps.spec import load_spec

from .replica_reading import maker, new_rows, planted, updated

APPS = ["simple_contacts", "simple_sms", "settings", "clock", "retro_music", "vlc", "osmand"]
SPECS = {app: load_spec(app) for app in APPS}
made = maker(SPECS)
TEMPLATES = [(t.name, t.ask is not None) for spec in SPECS.values() for t in spec.tasks]
#: templates whose wording names values (the others, "Turn wifi on.", read the same each time)
WITH_VALUES = {t.name for spec in SPECS.values() for t in spec.tasks if "{" in t.instruction}


def test_the_apps_cover_twenty_nine_templates_ten_with_an_ask_variant():
    assert len(TEMPLATES) == 29 and sum(ask for _, ask in TEMPLATES) == 10


@pytest.mark.parametrize(("name", "ask"), TEMPLATES)
def test_every_template_grounds_for_three_seeds(name, ask):
    tasks = [made(name, seed).task for seed in range(3)]
    assert [t.id for t in tasks] == [f"{name}/{seed}" for seed in range(3)]
    if name in WITH_VALUES:
        assert len({t.instruction for t in tasks}) == 3
    if ask:
        asked = made(name, 0, ask=True).task
        assert asked.id == f"{name}/0-ask" and asked.setup["user"]
        for value in asked.setup["user"].values():  # the hidden detail is not in the wording
            assert str(value) not in asked.instruction


def test_a_text_goes_to_the_number_named_with_the_message_named():
    g = made("SimpleSmsSend")
    (sms,) = new_rows(g, "message")
    assert sms["direction"] == "sent"
    assert sms["number"] in g.task.instruction and sms["body"] in g.task.instruction


def test_the_reply_to_the_most_recent_text_goes_to_the_planted_newest_sender():
    g = made("SimpleSmsReplyMostRecent")
    conversation, message = planted(g, "conversation")[0], planted(g, "message")[0]
    seeded = [r["date"] for r in TaskGenerator(SPECS["simple_sms"]).scope.rows("message")]
    assert message["date"] > max(str(d) for d in seeded)  # it is the most recent text
    (reply,) = new_rows(g, "message")
    assert (reply["number"], reply["direction"]) == (conversation["number"], "sent")
    assert conversation["number"] not in g.task.instruction  # the agent must find it


def test_a_resend_repeats_the_planted_sent_text_to_its_number():
    g = made("SimpleSmsResend")
    sent = next(m for m in planted(g, "message") if m["direction"] == "sent")
    (again,) = new_rows(g, "message")
    assert (again["number"], again["body"]) == (sent["number"], sent["body"])
    assert sent["body"] not in g.task.instruction


def test_the_received_address_goes_to_the_other_person():
    g = made("SimpleSmsSendReceivedAddress")
    friend, sender = planted(g, "conversation")
    address = planted(g, "message")[-1]
    assert address["conversation"] == sender["name"]
    (sms,) = new_rows(g, "message")
    assert (sms["number"], sms["body"]) == (friend["number"], address["body"])
    assert address["body"] not in g.task.instruction


@pytest.mark.parametrize(
    ("name", "row", "before", "after"),
    [
        ("SystemWifiTurnOff", "Wi-Fi", "On", "Off"),
        ("SystemWifiTurnOn", "Wi-Fi", "Off", "On"),
        ("SystemBluetoothTurnOff", "Bluetooth", "On", "Off"),
        ("SystemBluetoothTurnOn", "Bluetooth", "Off", "On"),
        ("SystemBrightnessMax", "Brightness level", "0%", "100%"),
        ("SystemBrightnessMin", "Brightness level", "100%", "0%"),
    ],
)
def test_a_setting_starts_from_the_other_state_and_must_end_in_the_asked_one(
    name, row, before, after
):
    g = made(name)
    rows = {p["name"]: p["value"] for p in planted(g, "setting")}
    assert rows[row] == before
    assert updated(g, "setting", "value") == [after]


@pytest.mark.parametrize(
    ("name", "row", "state"),
    [
        ("SystemWifiTurnOffVerify", "Wi-Fi", "Off"),
        ("SystemWifiTurnOnVerify", "Wi-Fi", "On"),
        ("SystemBluetoothTurnOffVerify", "Bluetooth", "Off"),
        ("SystemBluetoothTurnOnVerify", "Bluetooth", "On"),
        ("SystemBrightnessMaxVerify", "Brightness level", "100%"),
        ("SystemBrightnessMinVerify", "Brightness level", "0%"),
    ],
)
def test_a_setting_already_as_asked_must_be_looked_at_and_left_alone(name, row, state):
    g = made(name)
    rows = {p["name"]: p["value"] for p in planted(g, "setting")}
    assert rows[row] == state
    checks = g.task.verifier["checks"]
    (visit,) = [c for c in checks if c["kind"] == "visited"]
    assert visit["evidence"][0]["view"] == "setting"
    assert not updated(g, "setting", "value")  # nothing may change
    assert all(c.get("gate") for c in checks if c["kind"] in ("unchanged", "sql"))
    assert {m["name"] for m in g.mutations} >= {"never looked"}
    assert any(m["name"].endswith("done anyway") for m in g.mutations)


def test_wifi_on_then_the_clock_app_in_front():
    g = made("TurnOnWifiAndOpenApp")
    assert updated(g, "setting", "value") == ["On"]
    assert {"kind": "foreground", "app": "clock"}.items() <= next(
        c for c in g.task.verifier["checks"] if c["kind"] == "foreground"
    ).items()


def test_wifi_off_then_bluetooth_on_checks_both():
    g = made("TurnOffWifiAndTurnOnBluetooth")
    rows = {p["name"]: p["value"] for p in planted(g, "setting")}
    assert (rows["Wi-Fi"], rows["Bluetooth"]) == ("On", "Off")
    assert sorted(updated(g, "setting", "value")) == ["Off", "On"]


def test_a_timer_is_set_to_the_duration_asked_and_left_ready():
    g = made("ClockTimerEntry")
    (timer,) = new_rows(g, "timer")
    assert timer["state"] == "ready"  # "Do not start the timer."
    assert f"{timer['hours']} hours, {timer['minutes']} minutes" in g.task.instruction


@pytest.mark.parametrize(
    ("name", "before", "after"),
    [
        ("ClockStopWatchRunning", "stopped", "running"),
        ("ClockStopWatchPausedVerify", "running", "paused"),
    ],
)
def test_the_stopwatch_starts_in_the_other_state(name, before, after):
    g = made(name)
    assert planted(g, "stopwatch")[0]["state"] == before
    assert updated(g, "stopwatch", "state") == [after]


@pytest.mark.parametrize(
    ("name", "table", "entity", "column"),
    [
        ("RetroCreatePlaylist", "playlist_song", "song", "song_id"),
        ("RetroPlayingQueue", "queue_item", "song", "song_id"),
        ("VlcCreatePlaylist", "playlist_video", "video", "video_id"),
    ],
)
def test_the_items_are_expected_in_the_order_the_instruction_names_them(
    name, table, entity, column
):
    g = made(name)
    items = sorted(new_rows(g, table), key=lambda r: r["position"])
    assert [r["position"] for r in items] == list(range(1, len(items) + 1))
    assert 2 <= len(items) <= 5
    app = "vlc" if entity == "video" else "retro_music"
    gen = TaskGenerator(SPECS[app])
    shown = [gen.scope.display(entity, gen.scope.row(entity, r[column])) for r in items]
    assert ", ".join(shown) in g.task.instruction
    if "playlist" in table:  # one playlist, named as asked, holding them all
        (playlist,) = new_rows(g, "playlist")
        assert playlist["name"] in g.task.instruction
        assert {r["playlist"] for r in items} == {playlist["name"]}


def test_two_playlists_get_their_own_videos():
    g = made("VlcCreateTwoPlaylists")
    lists = {p["name"] for p in new_rows(g, "playlist")}
    assert len(lists) == 2
    items = new_rows(g, "playlist_video")
    assert sorted(sum(r["playlist"] == name for r in items) for name in lists) == [2, 3]


@pytest.mark.parametrize(
    ("name", "table"), [("OsmAndFavorite", "favorite"), ("OsmAndMarker", "marker")]
)
def test_a_place_is_saved_with_the_named_places_coordinates(name, table):
    g = made(name)
    (saved,) = new_rows(g, table)
    assert f"{saved['name']}, Liechtenstein" in g.task.instruction
    gen = TaskGenerator(SPECS["osmand"])
    (place,) = [r for r in gen.scope.rows("place") if r["name"] == saved["name"]]
    assert (saved["lat"], saved["lon"]) == (place["lat"], place["lon"])


def test_a_new_contact_has_the_name_and_number_asked():
    g = made("ContactsAddContact")
    (contact,) = new_rows(g, "contact")
    assert contact["phone"] in g.task.instruction
    assert contact["name"] == f"{contact['first_name']} {contact['last_name']}"
    assert contact["name"] in g.task.instruction
