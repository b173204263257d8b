"""The Appium backend against a real Appium server (its fake driver), started on loopback.

The fake driver's "app" is an XML file (``fake_app.xml`` here: the sample app is not shipped in
the npm package) whose text is the page source; its screenshot is a fixed 400x852 PNG. It logs
W3C actions instead of performing them (read back through ``get_log("actions")``), types only
into ``MockInputField`` elements, and has no back, home, keycodes or app management.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from palaestra.envs.mobile.appium_phone import AppiumPhone, parse_page_source
from palaestra.envs.mobile.appium_server import (
    FAKE_APP,
    FAKE_CAPS,
    _free_port,
    installed,
    local_appium,
    stop,
)
from palaestra.envs.mobile.phone import Phone, PhoneError

pytestmark = pytest.mark.appium

APP = FAKE_APP
CAPS = FAKE_CAPS


@contextmanager
def appium_server(log: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    # make setup installs it or fails; a missing server is a failure here, never a skip
    assert installed(), "Appium is not installed: run scripts/setup-appium.sh"
    with local_appium(log) as running:
        yield running


_stop = stop


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with appium_server(tmp_path_factory.mktemp("appium") / "appium.log") as (url, _):
        yield url


@pytest.fixture
def phone(server: str) -> Iterator[AppiumPhone]:
    p = AppiumPhone(server, CAPS)
    yield p
    p.close()


def _by_id(phone: AppiumPhone, rid: str):
    return next(e for e in phone.elements() if e.resource_id == rid)


def _actions(phone: AppiumPhone) -> list[list[dict]]:
    """The pointer actions of each W3C actions call the fake driver received."""
    return [call[0]["actions"] for call in phone.driver.get_log("actions")]


def test_implements_the_phone_protocol(phone):
    members = {n for n in dir(Phone) if not n.startswith("_")} | set(Phone.__annotations__)
    assert members <= set(dir(phone))
    assert isinstance(phone.size, tuple) and len(phone.size) == 2


def test_screenshot_is_portrait_rgb(phone):
    shot = phone.screenshot()
    assert shot.dtype == np.uint8 and shot.ndim == 3 and shot.shape[2] == 3
    assert phone.size == (shot.shape[1], shot.shape[0]) == (400, 852)
    assert shot.shape[0] > shot.shape[1] and shot.std() > 0


def test_elements_from_the_page_source(phone):
    els = phone.elements()
    assert [e.index for e in els] == list(range(len(els)))
    assert all(e.x_max > e.x_min and e.y_max > e.y_min for e in els)
    assert "hidden" not in {e.resource_id for e in els}  # visible="false"
    # the fake driver's form
    box = _by_id(phone, "input")
    assert (box.class_name, box.content_description) == ("MockInputField", "Search mail")
    assert (box.x_min, box.y_min, box.x_max, box.y_max) == (20, 100, 380, 156)
    assert box.is_editable and box.is_clickable
    send = _by_id(phone, "send")
    assert send.text == "Send" and send.is_clickable and not send.is_editable
    title = _by_id(phone, "title")
    assert title.text == "Palaestra Mail" and not title.is_clickable
    # UiAutomator2's form
    star = _by_id(phone, "com.example.mail:id/starred")
    assert star.class_name == "android.widget.CheckBox" and star.package_name == "com.example.mail"
    assert (star.x_min, star.y_min, star.x_max, star.y_max) == (20, 250, 380, 300)
    assert star.is_checked and star.is_clickable and not star.is_editable
    subject = _by_id(phone, "com.example.mail:id/subject")
    assert subject.text == "مرحبا" and subject.is_editable and subject.is_focused
    compose = _by_id(phone, "com.example.mail:id/compose")
    assert compose.content_description == "Compose" and not compose.is_enabled
    frame = next(e for e in els if e.class_name == "android.widget.FrameLayout")
    assert frame.is_scrollable and not frame.is_clickable
    assert compose.to_json()["bbox_pixels"] == {
        "x_min": 300,
        "y_min": 680,
        "x_max": 380,
        "y_max": 760,
    }


def test_tap_on_an_element_centre_is_a_touch_at_that_point(phone):
    x, y = _by_id(phone, "send").center
    phone.tap(x, y)
    (actions,) = _actions(phone)[-1:]
    assert actions[0] == {
        "type": "pointerMove",
        "duration": 0,
        "x": 310,
        "y": 194,
        "origin": "viewport",
    }
    assert [a["type"] for a in actions] == ["pointerMove", "pointerDown", "pause", "pointerUp"]
    call = phone.driver.get_log("actions")[-1][0]
    assert call["parameters"] == {"pointerType": "touch"}


def test_double_tap_and_long_press(phone):
    phone.double_tap(100, 200)
    phone.long_press(100, 200, ms=900)
    double, long = _actions(phone)[-2:]
    assert [a["type"] for a in double].count("pointerDown") == 2
    assert [a["type"] for a in long] == ["pointerMove", "pointerDown", "pause", "pointerUp"]
    assert long[2]["duration"] == 900


def test_swipe_moves_the_finger_over_the_duration(phone):
    phone.swipe(200, 700, 200, 150, ms=400)
    (actions,) = _actions(phone)[-1:]
    assert [a["type"] for a in actions] == [
        "pointerMove",
        "pointerDown",
        "pointerMove",
        "pointerUp",
    ]
    assert (actions[0]["x"], actions[0]["y"]) == (200, 700)
    assert (actions[2]["x"], actions[2]["y"], actions[2]["duration"]) == (200, 150, 400)


def test_type_emoji_and_rtl_into_the_tapped_field(phone):
    from appium.webdriver.common.appiumby import AppiumBy

    text = "héllo 👋🏽 שלום مرحبا"
    phone.tap(*_by_id(phone, "input").center)
    phone.type_text(text)
    assert phone.driver.find_element(AppiumBy.ID, "input").text == text


def test_state_foreground_and_reset(phone):
    state = phone.state()
    assert state["backend"] == "appium" and state["server"] == phone.url
    assert "<MockInputField" in state["source"]
    assert phone.foreground() == "fake_app" and phone.apps() == ["fake_app"]
    before = phone.driver.session_id
    phone.start({}, seed=0)  # no package id: a fresh session reloads the app
    assert phone.driver.session_id != before and len(phone.elements()) == 8


def test_back_and_home_are_not_in_the_fake_driver(phone):
    """The fake driver implements neither; the error names the server and the command."""
    with pytest.raises(PhoneError, match=rf"^Appium server {phone.url} failed on back: .*"):
        phone.back()
    with pytest.raises(PhoneError, match=r"failed on home: .*pressButton"):
        phone.home()


def test_a_command_the_server_rejects(phone):
    # the fake driver refuses keys for anything but a MockInputField
    phone.tap(*_by_id(phone, "com.example.mail:id/subject").center)
    with pytest.raises(PhoneError, match=rf"{phone.url} failed on type_text: .*invalid state"):
        phone.type_text("x")
    with pytest.raises(PhoneError, match=r"failed on open_app\('Mail'\)"):
        phone.open_app("Mail")
    phone.close()
    with pytest.raises(PhoneError, match="failed on tap: the session is closed"):
        phone.tap(1, 1)


def test_an_app_that_fails_to_start(server):
    caps = dict(CAPS, **{"appium:app": str(APP.with_name("missing.xml"))})
    with pytest.raises(PhoneError, match=rf"{server} failed on new session: .*missing\.xml"):
        AppiumPhone(server, caps)


def test_a_server_that_is_down_fails_fast():
    url = f"http://127.0.0.1:{_free_port()}"
    t = time.monotonic()
    with pytest.raises(PhoneError, match=rf"^Appium server {url} failed on new session: "):
        AppiumPhone(url, CAPS)
    # a refused connection is not retried for long (the client's default retries take
    # minutes); a bound far from both, so load decides neither way
    assert time.monotonic() - t < 30


def test_a_server_that_hangs_times_out():
    """Accepts the connection, never answers: bounded by the timeout, not the client's retries."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        t = time.monotonic()
        with pytest.raises(PhoneError, match=rf"{url} failed on new session: .*[Tt]imed? ?out"):
            AppiumPhone(url, CAPS, session_timeout=1.0)
        assert time.monotonic() - t < 30  # the 1 s timeout, not the default's minutes


def test_a_server_that_dies_mid_session(tmp_path):
    """A second real server, stopped under an open session: commands fail at once."""
    with appium_server(tmp_path / "appium.log") as (url, proc):
        phone = AppiumPhone(url, CAPS)
        phone.tap(10, 10)
        _stop(proc)
        t = time.monotonic()
        with pytest.raises(PhoneError, match=rf"^Appium server {url} failed on swipe: "):
            phone.swipe(10, 10, 10, 300)
        with pytest.raises(PhoneError, match=rf"^Appium server {url} failed on screenshot: "):
            phone.screenshot()
        assert time.monotonic() - t < 30  # refused at once, not the 60 s command timeout
        phone.close()  # quietly: the server is gone


def test_ui_automator2_and_xcuitest_sources():
    android = (
        '<?xml version="1.0" encoding="UTF-8"?><hierarchy index="0" rotation="0" width="1080"'
        ' height="2400"><android.widget.TextView index="0" package="com.android.settings"'
        ' class="android.widget.TextView" text="Wi-Fi" resource-id="android:id/title"'
        ' checkable="false" checked="false" clickable="false" enabled="true" focusable="false"'
        ' focused="false" scrollable="false" displayed="true" bounds="[42,300][1038,380]"/>'
        "</hierarchy>"
    )
    (el,), paths = parse_page_source(android)
    assert (el.text, el.class_name, el.is_clickable, el.is_editable) == (
        "Wi-Fi",
        "android.widget.TextView",
        False,
        False,
    )
    assert (el.x_min, el.y_min, el.x_max, el.y_max) == (42, 300, 1038, 380)
    assert paths == ["/hierarchy/android.widget.TextView[1]"]
    ios = (
        '<AppiumAUT><XCUIElementTypeApplication type="XCUIElementTypeApplication" name="Mail"'
        ' label="Mail" enabled="true" visible="true" x="0" y="0" width="390" height="844">'
        '<XCUIElementTypeTextField type="XCUIElementTypeTextField" name="to" label="To"'
        ' value="ana@example.com" enabled="true" visible="true" x="10" y="100" width="370"'
        ' height="44"/></XCUIElementTypeApplication></AppiumAUT>'
    )
    app, field = parse_page_source(ios, scale=(3.0, 3.0))[0]
    assert (app.x_max, app.y_max) == (1170, 2532)  # points -> screenshot pixels
    assert field.is_editable and field.is_clickable and field.text == "ana@example.com"
    assert (field.resource_id, field.content_description) == ("to", "To")
    assert (field.x_min, field.y_min, field.x_max, field.y_max) == (30, 300, 1140, 432)
