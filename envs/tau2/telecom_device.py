"""The user's phone in tau2-bench's telecom domain (dual control): its state and the user's tools.

Mirrors tau2-bench ``src/tau2/domains/telecom/user_tools.py`` and ``user_data_model.py``: the
device (SIM, airplane mode, mobile data, roaming, network mode, APN, Wi-Fi calling, data saver,
VPN, app permissions) and the user's surroundings (abroad or not, signal per technology, and what
the agent's side syncs in: line active, roaming allowed, data quota exceeded, payment request).
The user's tools answer with tau2's texts (status bar, speed test, ...); the functions the tasks'
``initialization_actions`` and ``env_assertions`` name on the ``user`` side are here too, but
only ``@tool`` methods are the user's tools.

Left: Wi-Fi networks to join (tau2 has none either), and any rendering of the device for a
simulated user beyond the tool texts.
"""

from __future__ import annotations

import copy
import functools
import tomllib
from collections.abc import Callable
from typing import Any

from palaestra.envs.tau2.telecom_world import ToolError, telecom_dir, tool

NETWORK_MODES = ("4g_5g_preferred", "4g_only", "3g_only", "2g_only")
_SIGNAL_ICON = {
    "none": "📵 No Signal",
    "poor": "📶¹ Poor",
    "fair": "📶² Fair",
    "good": "📶³ Good",
    "excellent": "📶⁴ Excellent",
}
_SPEED = {"2G": (0.1, 0.4), "3G": (1.0, 5.0), "4G": (10.0, 100.0), "5G": (50.0, 500.0)}
_SIGNAL_FACTOR = {"poor": 0.2, "fair": 0.5, "good": 0.8, "excellent": 1.0}
_ADVICE = {
    "Very Poor": "Connection is very slow. Basic web browsing might be difficult.",
    "Poor": "Connection is slow. Web browsing may be sluggish, streaming difficult.",
    "Fair": "Connection is okay for web browsing and some standard definition streaming.",
    "Good": "Connection is good for most activities, including HD streaming.",
    "Excellent": "Connection is very fast.",
}
_SIM_TEXT = {
    "active": "Your SIM card is active and working.",
    "missing": "No SIM card detected in the phone.",
    "locked_pin": "The SIM card is locked with a PIN code.",
    "locked_puk": "The SIM card is locked with a PUK code.",
}


def _vpn_repr(details: dict[str, Any]) -> str:
    """The details as tau2 prints them: the repr of its model dump, the enum member included."""
    perf = details["server_performance"]
    shown = {**details, "server_performance": f"<PerformanceLevel.{perf.upper()}: {perf!r}>"}
    items = (f"{k!r}: {v if k == 'server_performance' else repr(v)}" for k, v in shown.items())
    return "{" + ", ".join(items) + "}"


def default_apn() -> dict[str, Any]:
    return {
        "apn_name": "internet",
        "reset_at_reboot": False,
        "mms_apn": "mms",
        "mmsc_url": "http://mms.carrier.com/mms/wapenc",
        "mms_proxy": None,
        "mms_port": None,
    }


def _perms(**granted: bool) -> dict[str, bool]:
    return {p: granted.get(p, False) for p in ("sms", "storage", "phone", "network")}


@functools.cache
def _user_template() -> dict[str, Any]:
    device: dict[str, Any] = {
        "sim_card_status": "active",
        "sim_card_missing": False,
        "airplane_mode": False,
        "network_signal_strength": "good",
        "network_technology_connected": "5G",
        "network_connection_status": "connected",
        "battery_level": 80,
        "data_enabled": True,
        "roaming_enabled": False,
        "network_mode_preference": "4g_5g_preferred",
        "active_apn_settings": default_apn(),
        "wifi_enabled": False,
        "wifi_connected": False,
        "wifi_ssid": None,
        "wifi_signal_strength": "none",
        "wifi_calling_enabled": False,
        "wifi_calling_mms_over_wifi": False,
        "data_saver_mode": False,
        "vpn_enabled_setting": False,
        "vpn_connected": False,
        "vpn_details": None,
        "app_statuses": {},
    }
    loaded = tomllib.loads((telecom_dir() / "user_db.toml").read_text())["device"]
    apn = loaded.pop("active_apn_settings", {})
    apps = loaded.pop("app_statuses", {})
    device.update(loaded)
    device["active_apn_settings"].update(apn)
    for name, app in apps.items():
        device["app_statuses"][name] = {
            "app_name": name,
            "permissions": _perms(**app.get("permissions", {})),
        }
    surroundings = {
        "name": None,
        "phone_number": None,
        "is_abroad": False,
        "roaming_allowed": False,
        "signal_strength": {"2G": "poor", "3G": "fair", "4G": "good", "5G": "excellent"},
        "mobile_data_usage_exceeded": False,
        "line_active": True,
        "payment_request": None,
    }
    return {"device": device, "surroundings": surroundings}


def user_db() -> dict[str, Any]:
    """A fresh copy of the user's side: ``{"device": ..., "surroundings": ...}``."""
    return copy.deepcopy(_user_template())


def _forcing(key: str, on: bool, search: bool, message: str) -> Callable[[DeviceTools], str]:
    """An initialization action that puts the switch ``key`` in position ``on`` as tau2 does
    (toggling, with a network search per toggle when ``search``) and answers ``message``; the
    actions differ only in these four, so each is one row instead of a method body."""

    def action(self: DeviceTools) -> str:
        self._force(key, on, search)
        return message

    return action


def _toggling(key: str, search: bool, label: str) -> Callable[..., Any]:
    """A device tool that flips the switch ``key`` (a network search follows when ``search``)
    and says its new position as tau2 does; the switch tools differ only in these three."""

    @tool
    def toggle(self: DeviceTools) -> str:
        on = self._flip(key, search)
        return self._with_bar(f"{label} is now {'ON' if on else 'OFF'}.")

    return toggle


class DeviceTools:
    """The user's tools on their phone (tau2 ``TelecomUserTools``)."""

    TAU2_NAME = "TelecomUserTools"

    def __init__(self, db: dict[str, Any]) -> None:
        self.db = db

    @property
    def dev(self) -> dict[str, Any]:
        return self.db["device"]

    @property
    def env(self) -> dict[str, Any]:
        return self.db["surroundings"]

    def _with_bar(self, text: str) -> str:
        return f"{text}\nStatus Bar: {self._status_bar()}"

    # --- derived state
    def _sim_status(self) -> str:
        return "missing" if self.dev["sim_card_missing"] else str(self.dev["sim_card_status"])

    def _status_bar(self) -> str:
        d = self.dev
        parts = []
        if d["airplane_mode"]:
            parts.append("✈️ Airplane Mode")
        else:
            parts.append(_SIGNAL_ICON.get(d["network_signal_strength"], "📵 No Signal"))
            tech = d["network_technology_connected"]
            if tech != "none":
                parts.append(tech)
            if d["data_enabled"] and tech != "none":
                parts.append("📱 Data Enabled")
                if d["data_saver_mode"]:
                    parts.append("🔽 Data Saver")
            else:
                parts.append("📵 Data Disabled")
        if d["wifi_enabled"] and d["wifi_connected"]:
            parts.append(f"📡 Connected to {d['wifi_ssid']}" if d["wifi_ssid"] else "📡 Enabled")
        if d["vpn_connected"]:
            parts.append("🔒 VPN Connected")
        parts.append(f"🔋 {d['battery_level']}%")
        return " | ".join(parts)

    def _mobile_data_working(self) -> bool:
        d, env = self.dev, self.env
        if d["airplane_mode"] or d["network_signal_strength"] == "none":
            return False
        if d["network_connection_status"] == "no_service":
            return False
        if env["is_abroad"] and not (d["roaming_enabled"] and env["roaming_allowed"]):
            return False
        return bool(d["data_enabled"]) and not env["mobile_data_usage_exceeded"]

    def _speed(self) -> tuple[float | None, str]:
        if not self._mobile_data_working():
            return None, "No Connection"
        d = self.dev
        vpn = d["vpn_details"]
        factor = 0.1 if d["vpn_connected"] and vpn and vpn["server_performance"] == "poor" else 1.0
        if d["data_saver_mode"]:
            factor *= 0.2
        low, high = _SPEED.get(d["network_technology_connected"], (0.0, 0.0))
        speed = round(
            (low + high) / 2.0 * _SIGNAL_FACTOR.get(d["network_signal_strength"], 0.0) * factor, 2
        )
        for bound, desc in ((1, "Very Poor"), (5, "Poor"), (25, "Fair"), (100, "Good")):
            if speed < bound:
                return speed, desc
        return speed, "Excellent"

    def _can_send_mms(self) -> bool:
        d = self.dev
        if not self._mobile_data_working() or d["network_technology_connected"] == "2G":
            return False
        if d["wifi_calling_enabled"] and d["wifi_calling_mms_over_wifi"]:
            return False
        if d["active_apn_settings"]["mmsc_url"] is None:
            return False
        app = d["app_statuses"].get("messaging")
        return bool(app and app["permissions"]["storage"] and app["permissions"]["sms"])

    def simulate_network_search(self) -> None:
        d, env = self.dev, self.env
        no_service = self._sim_status() != "active" or d["airplane_mode"]
        no_service |= d["active_apn_settings"]["apn_name"] == "broken" or not env["line_active"]
        if no_service:
            d.update(network_connection_status="no_service", network_technology_connected="none")
            d["network_signal_strength"] = "none"
            return
        pref = d["network_mode_preference"]
        tech = {"4g_only": "4G", "3g_only": "3G", "2g_only": "2G"}.get(pref, "4G")
        if pref == "4g_5g_preferred" and env["signal_strength"].get("5G", "none") != "none":
            tech = "5G"
        d["network_connection_status"] = "connected"
        d["network_technology_connected"] = tech
        d["network_signal_strength"] = env["signal_strength"].get(tech, "none")

    # --- the user's read tools
    @tool
    def check_status_bar(self) -> str:
        return f"Status Bar: {self._status_bar()}"

    @tool
    def check_network_status(self) -> str:
        d = self.dev
        lines = [
            f"Airplane Mode: {'ON' if d['airplane_mode'] else 'OFF'}",
            f"SIM Card Status: {self._sim_status()}",
            f"Cellular Connection: {d['network_connection_status']}",
            f"Cellular Signal: {d['network_signal_strength']}",
            f"Cellular Network Type: {d['network_technology_connected']}",
            f"Mobile Data Enabled: {'Yes' if d['data_enabled'] else 'No'}",
            f"Data Roaming Enabled: {'Yes' if d['roaming_enabled'] else 'No'}",
            f"Wi-Fi Radio: {'ON' if d['wifi_enabled'] else 'OFF'}",
            f"Wi-Fi Connected: {'Yes' if d['wifi_connected'] else 'No'}",
        ]
        if d["wifi_connected"]:
            lines.append(f"Connected Wi-Fi Network: {d['wifi_ssid']}")
        return "\n".join(lines)

    @tool
    def check_network_mode_preference(self) -> str:
        return f"Network Mode Preference: {self.dev['network_mode_preference']}"

    @tool
    def run_speed_test(self) -> str:
        speed, desc = self._speed()
        if speed is None:
            return f"Speed test failed: {desc or 'Could not determine speed'}."
        return f"Speed Test Result: {speed:.2f} Mbps ({desc}). {_ADVICE.get(desc, '')}"

    @tool
    def check_sim_status(self) -> str:
        status = self._sim_status()
        return _SIM_TEXT.get(status, f"Unknown SIM status: {status}")

    @tool
    def check_data_restriction_status(self) -> str:
        return (
            "Data Saver mode is ON (limits data usage)."
            if self.dev["data_saver_mode"]
            else "Data Saver mode is OFF."
        )

    @tool
    def check_apn_settings(self) -> str:
        apn = self.dev["active_apn_settings"]
        return (
            f"Current APN Name: {apn['apn_name'] or 'Not Set'}\n"
            f"MMSC URL (for picture messages): {apn['mmsc_url'] or 'Not Set'}\n"
            "(These are technical settings, usually best left unchanged.)"
        )

    @tool
    def check_wifi_status(self) -> str:
        d = self.dev
        if not d["wifi_enabled"]:
            return "Wi-Fi is turned OFF."
        if d["wifi_connected"]:
            return (
                f"Wi-Fi is ON and connected to '{d['wifi_ssid']}'. "
                f"Signal strength: {d['wifi_signal_strength']}."
            )
        return "Wi-Fi is ON but not connected to any network."

    @tool
    def check_wifi_calling_status(self) -> str:
        on = "ON" if self.dev["wifi_calling_enabled"] else "OFF"
        return f"Wi-Fi Calling is currently turned {on}."

    @tool
    def check_vpn_status(self) -> str:
        d = self.dev
        if d["vpn_connected"]:
            if d["vpn_details"]:
                return f"VPN is ON and connected. Details: {_vpn_repr(d['vpn_details'])}"
            return "VPN is ON and connected (no specific details available)."
        if d["vpn_enabled_setting"]:
            return "VPN is turned ON in settings, but currently not connected."
        return "VPN is turned OFF."

    @tool
    def check_installed_apps(self) -> str:
        return (
            f"The following apps are installed on the phone: {', '.join(self.dev['app_statuses'])}"
        )

    def _granted(self, app_name: str) -> list[str] | None:
        app = self.dev["app_statuses"].get(app_name)
        return None if app is None else [p for p, on in app["permissions"].items() if on]

    @tool
    def check_app_status(self, app_name: str) -> str:
        granted = self._granted(app_name)
        if granted is None:
            return f"App '{app_name}' not found on this phone."
        lines = [f"Status for App: {app_name}"]
        if not granted:
            lines.append(" - Permissions: None granted.")
        else:
            lines.append(" - Permissions Granted:")
            lines += [f"   - {p.replace('_', ' ')}" for p in granted]
        return "\n".join(lines)

    @tool
    def check_app_permissions(self, app_name: str) -> str:
        granted = self._granted(app_name)
        if granted is None:
            return f"App '{app_name}' not found on this phone."
        if not granted:
            return f"App '{app_name}' currently has no permissions granted."
        return f"App '{app_name}' has permission for: {', '.join(granted)}."

    @tool
    def can_send_mms(self) -> str:
        can = "can" if self._can_send_mms() else "cannot"
        return f"Your messaging app {can} send MMS messages."

    @tool
    def check_payment_request(self) -> str:
        req = self.env["payment_request"]
        if req is None:
            return "No payment request has been made."
        return f"You have a payment request for bill {req['bill_id']} of {req['amount_due']} USD."

    # --- the user's write tools
    @tool
    def set_network_mode_preference(self, mode: str) -> str:
        if mode not in NETWORK_MODES:
            return self._with_bar(
                f"Failed to set network mode: '{mode}' is not a valid option. "
                f"Please use one of: {', '.join(NETWORK_MODES)}"
            )
        self.dev["network_mode_preference"] = mode
        self.simulate_network_search()
        return self._with_bar(f"Preferred Network Mode set to: {mode}")

    def _toggle_airplane(self) -> bool:
        d = self.dev
        was_on = d["airplane_mode"]
        d["airplane_mode"] = not was_on
        if was_on:
            d["network_connection_status"] = "searching"
        if not was_on or d["wifi_enabled"]:
            d.update(wifi_connected=False, wifi_ssid=None, wifi_signal_strength="none")
        if not was_on and d["vpn_connected"]:
            d.update(vpn_connected=False, vpn_details=None)
        self.simulate_network_search()
        return bool(d["airplane_mode"])

    @tool
    def toggle_airplane_mode(self) -> str:
        return self._with_bar(f"Airplane Mode is now {'ON' if self._toggle_airplane() else 'OFF'}.")

    def _flip(self, key: str, search: bool) -> bool:
        self.dev[key] = not self.dev[key]
        if search:
            self.simulate_network_search()
        return bool(self.dev[key])

    # switch, network search after the flip, what tau2 calls it in the answer
    toggle_data = _toggling("data_enabled", True, "Mobile Data")
    toggle_roaming = _toggling("roaming_enabled", True, "Data Roaming")
    toggle_data_saver_mode = _toggling("data_saver_mode", False, "Data Saver Mode")

    @tool
    def toggle_wifi(self) -> str:
        d = self.dev
        if d["airplane_mode"]:
            return self._with_bar("Cannot change Wi-Fi settings while Airplane Mode is ON.")
        d["wifi_enabled"] = not d["wifi_enabled"]
        if not d["wifi_enabled"]:
            d.update(wifi_connected=False, wifi_ssid=None, wifi_signal_strength="none")
        return self._with_bar(f"Wi-Fi is now {'ON' if d['wifi_enabled'] else 'OFF'}.")

    toggle_wifi_calling = _toggling("wifi_calling_enabled", False, "Wi-Fi Calling")

    @tool
    def reseat_sim_card(self) -> str:
        self.dev["sim_card_missing"] = False
        self.simulate_network_search()
        return self._with_bar("SIM card re-seated successfully.")

    @tool
    def set_apn_settings(self, apn_settings: dict[str, Any]) -> str:
        unknown = sorted(set(apn_settings) - set(default_apn()))
        if unknown:
            raise ToolError(f"APNSettings: extra fields not permitted: {', '.join(unknown)}")
        if apn_settings.get("apn_name", "internet") not in ("internet", "broken"):
            raise ToolError(
                "APNSettings: apn_name must be 'internet' or 'broken', "
                f"got {apn_settings['apn_name']!r}"
            )
        self.dev["active_apn_settings"] = {**default_apn(), **apn_settings}
        self.simulate_network_search()
        return self._with_bar(f"APN settings set to: {self.dev['active_apn_settings']['apn_name']}")

    @tool
    def reset_apn_settings(self) -> str:
        self.dev["active_apn_settings"]["reset_at_reboot"] = True
        self.simulate_network_search()
        return self._with_bar("APN settings will reset at reboot.")

    @tool
    def reboot_device(self) -> str:
        lines = []
        if self.dev["active_apn_settings"]["reset_at_reboot"]:
            lines.append("Resetting APN settings...")
            self.dev["active_apn_settings"] = default_apn()
        lines.append("Restarting network services...")
        self.dev["network_connection_status"] = "searching"
        self.simulate_network_search()
        return self._with_bar("\n".join(lines))

    @tool
    def connect_vpn(self) -> str:
        if self.dev["vpn_connected"]:
            return "VPN already connected."
        self._connect_vpn()
        return self._with_bar("VPN connected successfully.")

    def _connect_vpn(self) -> None:
        self.dev["vpn_connected"] = True
        self.dev["vpn_details"] = {
            "server_address": "192.168.1.1",
            "protocol": "OpenVPN",
            "server_performance": "excellent",
        }

    @tool
    def disconnect_vpn(self) -> str:
        was = self.dev["vpn_connected"]
        self.dev.update(vpn_connected=False, vpn_details=None)
        text = (
            "VPN disconnected successfully." if was else "No active VPN connection to disconnect."
        )
        return self._with_bar(text)

    @tool
    def grant_app_permission(self, app_name: str, permission: str) -> str:
        app = self.dev["app_statuses"].get(app_name)
        permission = permission.lower()
        if app is None:
            ok, msg = False, f"App '{app_name}' not found. Cannot grant permission."
        elif permission not in app["permissions"]:
            available = list(app["permissions"])
            ok, msg = (
                False,
                f"Permission '{permission}' not tracked for app '{app_name}', "
                f"available permissions: {available}",
            )
        else:
            app["permissions"][permission] = True
            ok, msg = True, f"Permission '{permission}' granted to app '{app_name}'."
        return self._with_bar(f"{'Success' if ok else 'Error'}. {msg}")

    @tool
    def make_payment(self) -> str:
        req = self.env["payment_request"]
        if req is None:
            return "You do not have a payment request."
        req["paid"] = True
        return f"Payment of {req['amount_due']} USD has been made for bill {req['bill_id']}."

    # --- initialization functions (tasks' initialization_actions, env_type "user")
    def set_user_info(self, name: str, phone_number: str) -> None:
        self.env.update(name=name, phone_number=phone_number)

    def set_user_location(self, abroad: bool) -> None:
        self.env["is_abroad"] = abroad

    def _force(self, key: str, on: bool, search: bool) -> None:
        if bool(self.dev[key]) != on:
            self._flip(key, search)
        elif search:  # tau2 toggles twice, searching each time
            self.simulate_network_search()

    def turn_airplane_mode_on(self) -> str:
        if not self._toggle_airplane():  # tau2 toggles, and again if that turned it off
            self._toggle_airplane()
        return "Airplane Mode is now ON."

    def turn_airplane_mode_off(self) -> str:
        if self._toggle_airplane():  # tau2 toggles, and again if that turned it on
            self._toggle_airplane()
        return "Airplane Mode is now OFF."

    def turn_data_on(self) -> str:
        self.dev["data_enabled"] = True  # tau2 sets it without a network search
        return "Data connection restored."

    # switch, wanted position, network search on each toggle, tau2's message
    turn_data_off = _forcing("data_enabled", False, True, "Data connection broken.")
    turn_roaming_on = _forcing("roaming_enabled", True, True, "Data Roaming is now ON.")
    turn_roaming_off = _forcing("roaming_enabled", False, True, "Data Roaming is now OFF.")
    turn_data_saver_mode_on = _forcing("data_saver_mode", True, False, "Data Saver Mode is now ON.")
    turn_data_saver_mode_off = _forcing(
        "data_saver_mode", False, False, "Data Saver Mode is now OFF."
    )

    def unseat_sim_card(self) -> str:
        self.dev["sim_card_missing"] = True
        self.simulate_network_search()
        return "SIM card un-seated successfully."

    def lock_sim_card(self, mode: str) -> str:
        if mode not in ("pin", "puk"):
            raise ToolError(f"lock_sim_card: mode must be 'pin' or 'puk', got {mode!r}")
        self.dev["sim_card_status"] = f"locked_{mode}"
        self.simulate_network_search()
        return f"SIM card locked successfully in {mode} mode."

    def break_apn_settings(self) -> str:
        self.dev["active_apn_settings"]["apn_name"] = "broken"
        self.simulate_network_search()
        return "APN settings broken. Please call reset_apn_settings() to fix."

    def break_apn_mms_setting(self) -> str:
        self.dev["active_apn_settings"]["mmsc_url"] = None
        return "APN MMS setting broken. Please call reset_apn_settings() to fix."

    def break_vpn(self) -> str:
        if not self.dev["vpn_connected"]:
            self._connect_vpn()
        self.dev["vpn_details"]["server_performance"] = "poor"
        return "VPN connection broken."

    def set_wifi_calling(self, enabled: bool, mms_over_wifi: bool | None = None) -> str:
        self.dev["wifi_calling_enabled"] = enabled
        msg = f"Wi-Fi Calling is now {'ON' if enabled else 'OFF'}."
        if mms_over_wifi is not None:
            self.dev["wifi_calling_mms_over_wifi"] = mms_over_wifi
            msg += f"\nMMS over Wi-Fi is now {'ON' if mms_over_wifi else 'OFF'}."
        return msg

    def remove_app_permission(self, app_name: str, permission: str) -> str:
        app = self.dev["app_statuses"].get(app_name)
        if app is None:
            raise ToolError(f"App '{app_name}' not found. Cannot remove permission.")
        if permission.lower() not in app["permissions"]:
            raise ToolError(f"Permission '{permission}' not tracked for app '{app_name}'.")
        app["permissions"][permission.lower()] = False
        return f"Permission '{permission}' removed from app '{app_name}'."

    # --- assertions (tasks' env_assertions, env_type "user")
    def assert_airplane_mode_status(self, expected_status: bool) -> bool:
        return bool(self.dev["airplane_mode"] == expected_status)

    def assert_service_status(self, expected_status: str) -> bool:
        return bool(self.dev["network_connection_status"] == expected_status)

    def assert_mobile_data_status(self, expected_status: bool) -> bool:
        return self._mobile_data_working() == expected_status

    def assert_mobile_roaming_status(self, expected_status: bool) -> bool:
        return bool(self.dev["roaming_enabled"] == expected_status)

    def assert_mobile_data_saver_mode_status(self, expected_status: bool) -> bool:
        return bool(self.dev["data_saver_mode"] == expected_status)

    def assert_internet_speed(
        self, expected_speed: float, expected_desc: str | None = None
    ) -> bool:
        speed, desc = self._speed()
        ok = (speed or 0.0) >= expected_speed
        return ok if expected_desc is None else ok and desc.lower() == expected_desc.lower()

    def assert_internet_not_excellent(self) -> bool:
        return self._speed()[1].lower() != "excellent"

    def assert_can_send_mms(self, expected_status: bool) -> bool:
        return self._can_send_mms() == expected_status

    def assert_mobile_data_usage_exceeded(self, expected_status: bool) -> bool:
        return bool(self.env["mobile_data_usage_exceeded"] == expected_status)
