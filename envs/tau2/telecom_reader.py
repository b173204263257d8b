"""The telecom user's device lexicon: what the assistant asks the user to do or to look at on
the phone, read clause by clause and in order.

"Reset the APN settings and then reboot" must not reboot first, and "it" stands for the
setting named last. Only what is addressed to the user acts: a statement ("your phone is set to
3G only") or the assistant's own step ("roaming needs to be enabled on your line") is no
instruction. Each instruction names one of the user's own tools (:mod:`.telecom_device`) and
its arguments; what the lexicon cannot map (no setting named, a network mode it does not know)
is :class:`Unclear`, asked back by the user (:mod:`.telecom_user`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from palaestra.envs.runtimes.simuser import acts

#: a setting the user switches: (its words, the toggle tool, the device field that says it is on)
SWITCHES: tuple[tuple[str, str, str, str], ...] = (
    ("airplane mode", r"airplane|aeroplane|flight mode|plane mode", "toggle_airplane_mode",
     "airplane_mode"),
    ("Wi-Fi calling", r"wi-?fi[ -]?calling|wlan calling", "toggle_wifi_calling",
     "wifi_calling_enabled"),
    ("data roaming", r"roaming", "toggle_roaming", "roaming_enabled"),
    ("data saver mode", r"data[ -]?saver|data restriction|low data mode",
     "toggle_data_saver_mode", "data_saver_mode"),
    ("mobile data", r"mobile data|cellular data|data connection|\bdata\b", "toggle_data",
     "data_enabled"),
    ("Wi-Fi", r"wi-?fi|wireless network|wlan", "toggle_wifi", "wifi_enabled"),
)  # fmt: skip


_VPN = r"\bvpn\b|virtual private network"


_SIM = r"\bsim\b|sim card"


_APN = r"\bapn\b|access point name|mmsc"


_MODES = (
    ("2g_only", r"2g[ _-]?only|only 2g"),
    ("3g_only", r"3g[ _-]?only|only 3g"),
    ("4g_only", r"(?:4g|lte)[ _-]?only|only (?:4g|lte)"),
    (
        "4g_5g_preferred",
        r"(?:4g|lte)[ _/,-]*(?:and |or )?5g|5g[ _/,-]*(?:and |or )?(?:4g|lte)|5g[ _-]?preferred|"
        r"\b5g\b|automatic",
    ),
)


_PERMISSIONS = (
    ("sms", r"\bsms\b|text messag\w*|texting"),
    ("storage", r"storage|\bfiles?\b|\bmedia\b|photos?"),
    ("phone", r"\bphone\b|\bcalls?\b"),
    ("network", r"\bnetwork\b|internet access"),
)


_APP_WORDS = {"messaging": r"messag\w*|\bsms app|\btexting app|\bmessages\b", "browser": r"browser"}


#: what the phone can show, in the order the words are tried: (words, check tool)
CHECKS: tuple[tuple[str, str], ...] = (
    (r"status bar|icons?\b|top of (?:your|the) screen", "check_status_bar"),
    (r"data usage|data limit|usage warning|data warning|how much data you", "data_usage"),
    (r"speed ?test|internet speed|\bspeed\b|how fast|browse|browsing|internet", "run_speed_test"),
    (r"\bmms\b|picture messag\w*|multimedia messag\w*|send (?:a )?(?:picture|photo)",
     "can_send_mms"),
    (r"payment request|\bbill\b", "check_payment_request"),
    (r"network (?:mode|type|preference)|preferred network|mode preference",
     "check_network_mode_preference"),
    (_SIM, "check_sim_status"),
    (_APN, "check_apn_settings"),
    (_VPN, "check_vpn_status"),
    (r"wi-?fi[ -]?calling", "check_wifi_calling_status"),
    (r"data[ -]?saver|data restriction", "check_data_restriction_status"),
    (r"installed apps|which apps|what apps|apps (?:are )?installed", "check_installed_apps"),
    (r"permission", "check_app_permissions"),
    (r"wi-?fi", "check_wifi_status"),
    (
        r"network status|network settings|signal|service|connection|connected|airplane|"
        r"aeroplane|mobile data|cellular data|roaming|\bdata\b|network",
        "check_network_status",
    ),
)  # fmt: skip


_ACTION_VERB = re.compile(
    r"\b(?:turn|switch|toggle|flip|enable|disable|activate|deactivate|set|change|reset|reboot|"
    r"restart|reseat|re-seat|reinsert|re-insert|remove|take out|disconnect|connect|grant|allow|"
    r"restore|insert|update|use|select|choose|pick|configure|"
    r"give|pay|exit|put|make sure|ensure)\b"
)


#: an instruction in another form: "get it switched off", "would you mind disabling ..."
_ASKED_FORM = re.compile(
    r"\b(?:get|have|keep|make sure|ensure|needs?|want|must|should)\b.*\b(?:turned|switched|"
    r"enabled|disabled|activated|deactivated|reset|restarted|rebooted|connected|disconnected|"
    r"granted|reseated|toggled)\b|\b(?:mind|try|start|consider|recommend|suggest|about|by)\s+"
    r"(?:turning|switching|enabling|disabling|activating|deactivating|toggling|resetting|"
    r"restarting|rebooting|disconnecting|granting|reseating|removing|setting|changing)\b"
)


_CHECK_VERB = re.compile(
    r"\b(?:check|look|tell me|what|which|see|verify|confirm|run|test|try|report|read|show|shows|"
    r"showing|is|are|does|do you|can you send|able to|working|work|let me know|you have)\b"
)


#: the assistant speaking of its own action: a proposal or a report, never an instruction
_AGENT_SELF = re.compile(
    r"\b(?:shall i|should i|would you like me to|do you want me to|want me to|like me to|may i|"
    r"can i|let me(?! know)|i(?:'ll| will| can| could| have| 've| am going to|'m going to)|"
    r"i've|i should|i (?:go ahead|proceed))\b"
)


#: what "it" may stand for besides a switch (the words are read back by the lexicon)
_NOUNS = [("vpn", _VPN), ("sim card", _SIM), ("apn settings", _APN)]


_PERMISSION = re.compile(r"\bpermission|\bgrant\b|\ballow\b|\baccess (?!point)")


#: a sentence that tells the user to act, though neither a question nor "please" (a list item
#: "Step 3: turn off Data Saver" starts after its colon)
DIRECTIVE = re.compile(
    r"(?:^|:)\W*(?:(?:and|so|now|next|ok|okay|first|then|also|lastly|finally|great|please)\W+)*"
    r"(?:turn|switch|toggle|flip|enable|disable|activate|deactivate|set|change|reset|reboot|"
    r"restart|reseat|re-seat|reinsert|re-insert|remove|take|disconnect|connect|grant|allow|"
    r"restore|update|select|choose|pick|give|pay|accept|exit|put|go|open|make sure|ensure|"
    r"check|run|try|look|tell|send)\b|"
    r"\b(?:step is to|you (?:need|have|should|must|will need|'ll need) to|go ahead and|"
    r"let's|lets|(?:needs?|has|have|must|should) (?:to )?be \w+ed)\b"
)


#: the line or account, on the assistant's side: "roaming needs to be enabled on your line"
AGENT_SIDE = re.compile(
    r"\b(?:on|for|to) (?:your|the) (?:line|account|plan)\b(?!.*\b(?:phone|device|settings)\b)|"
    r"\bline l\d+\b|\bsend (?:you )?(?:a |the )?payment request\b"
)


_NEGATED = re.compile(r"\b(?:don't|do not|never|no need to|without)\b")


_REBOOT = re.compile(
    r"\b(?:reboot|restart|power[ -]?cycle)\b|turn (?:your |the )?(?:phone|device) off and "
    r"(?:back )?on|switch (?:your |the )?(?:phone|device) off and (?:back )?on"
)


_RESEAT = re.compile(
    r"\b(?:re-?seat|re-?insert|take (?:out|the sim|your sim)|remove (?:and|the sim|your sim)|"
    r"pop (?:out|the sim|your sim)|put (?:it|the sim|your sim)(?: card)? back|"
    r"insert (?:it|the sim|your sim)(?: card)? (?:again|back))"
)


_PAY = re.compile(
    r"\b(?:make (?:the |a )?payment|pay (?:the |your |this |that |it|for)|accept (?:the |that |"
    r"this )?payment|complete (?:the )?payment|approve (?:the )?payment|pay\b)"
)


_ON = re.compile(
    r"\b(?:turn|switch|put|set|flip|toggl)\w*\b.*?\bon\b|\b(?:enabl|activat)\w*|"
    r"\b(?:make sure|ensure)\b.*\b(?:on|enabled)\b"
)


_OFF = re.compile(
    r"\b(?:turn|switch|put|set|flip|toggl)\w*\b.*?\boff\b|"
    r"\b(?:disabl\w*|deactivat\w*|exit|get out of|leave)\b|"
    r"\b(?:make sure|ensure)\b.*\b(?:off|disabled)\b"
)


_WHERE_ON = re.compile(
    r"\b(?:on|in|from) (?:your|the|my) (?:phone|device|handset|settings|screen|line|account)\b"
)


_CLAUSE = re.compile(
    r",? and then |,? then |; |, and |\band\b(?= (?:turn|switch|toggle|enable|disable|set|"
    r"reset|grant|disconnect|connect|reboot|restart|make|pay|accept|approve|check|run|try|tell|"
    r"let|put|take|remove|open|go|see|verify|confirm)\b)"
)


#: a sentence that asks the user something (a question, an instruction), not a statement
ASKS_USER = re.compile(
    r"\?\s*$|^(?:(?:and|so|now|next|ok|okay|great|thanks|first|then|also|lastly|finally)[,:]?\s+)*"
    r"(?:let's |lets )?"
    r"(?:please |kindly )?(?:check|look|run|try|tell|see|verify|confirm|go|open|read|test|"
    r"let me know|can you|could you|would you|will you|make sure|ensure)\b|\b(?:let me know|"
    r"tell me|i need you to|(?:i'd|i would) like you to|"
    r"you (?:need|should|will need|'ll need) to|please)\b"
)


#: a question for one of the user's facts or wishes, never a look at the phone
_FACT_QUESTION = re.compile(
    r"\bhow (?:much|many)\b|\bwould you like\b|\bdo you want\b|\bphone number\b|\bnumber on\b|"
    r"\byour (?:full )?name\b|\bwhere are you\b"
)


_NETWORK_MODE = re.compile(
    r"network mode|preferred network|network type|mode preference|network preference|"
    r"\b[2345]g\b|\blte\b"
)


_SET = re.compile(
    r"\b(?:set|change|switch|select|choose|put|update|use|uses|pick|configure|adjust|modify)\b"
)


#: an agent-self sentence that still tells the user to act ("I'll need you to ...")
_TO_USER = re.compile(r"\b(?:you|your)\b.*\b(?:please|need to|should|can|could|will need)\b")


@dataclass
class Instruction:
    """One thing the assistant asked the user to do or to look at on the phone."""

    tool: str
    arguments: dict[str, Any]
    text: str
    #: for a switch: True on, False off, None toggle whatever it is
    want: bool | None = None
    label: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "device", "tool": self.tool}
        if self.arguments:
            out["arguments"] = self.arguments
        if self.want is not None:
            out["want"] = "on" if self.want else "off"
        return out


@dataclass
class Unclear:
    """An instruction to act on the phone the lexicon could not map (asked back, ``unread``)."""

    text: str
    what: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": "unclear", "what": self.what}


def clean(sentence: str) -> str:
    """Lower case, tool names as words ("toggle_airplane_mode()" -> "toggle airplane mode"),
    and "on your phone" dropped so its "on" is not read as a direction."""
    low = sentence.lower().replace("\u2019", "'")
    low = re.sub(r"\b4g_5g_preferred\b", "4g/5g preferred", low)
    low = re.sub(r"\b([234]g)_only\b", r"\1 only", low)
    low = re.sub(r"(\w)_(?=\w)", r"\1 ", low).replace("()", "")
    return _WHERE_ON.sub(" ", low)


def _mode(low: str) -> str | None:
    for mode, words in _MODES:
        if re.search(words, low):
            return mode
    return None


def _switch(low: str) -> tuple[str, str, str, str] | None:
    for entry in SWITCHES:
        if re.search(entry[1], low):
            return entry
    return None


def _apps(low: str, installed: list[str]) -> list[str]:
    found = [a for a in installed if re.search(rf"\b{re.escape(a)}\b", low)]
    for app, words in _APP_WORDS.items():
        if app in installed and app not in found and re.search(words, low):
            found.append(app)
    return found


def _clause(
    low: str, text: str, installed: list[str], whole: str = ""
) -> list[Instruction | Unclear]:
    """The device instruction of one clause of ``whole`` (the sentence), if it gives one."""
    if _REBOOT.search(low) and not _NEGATED.search(low):
        return [Instruction("reboot_device", {}, text)]
    paying = _PAY.search(low) or (
        re.search(r"\b(?:accept|pay|approve) it\b", low) and "payment" in whole
    )
    if paying and not _NEGATED.search(low):
        return [Instruction("make_payment", {}, text)]
    if not (_ACTION_VERB.search(low) or _ASKED_FORM.search(low)) or _NEGATED.search(low):
        return []
    if re.search(r"^\W*(?:what|which)\b|\b(?:what|which) (?:network )?mode\b", low):
        return []  # a question about a setting, not an instruction to change it
    if _PERMISSION.search(low) or (
        _PERMISSION.search(whole) and _app_perms(low, whole, installed)[1]
    ):  # "open the messaging app's permissions and turn on SMS"
        apps, perms = _app_perms(low, whole, installed)
        if len(apps) != 1 or not perms:
            return [Unclear(text, "which app and which permission")]
        return [
            Instruction("grant_app_permission", {"app_name": apps[0], "permission": p}, text)
            for p in perms
        ]
    if _NETWORK_MODE.search(low) and _SET.search(low):
        mode = _mode(low)
        if mode is None:
            return [Unclear(text, "which network mode")]
        return [Instruction("set_network_mode_preference", {"mode": mode}, text)]
    if re.search(_APN, low) and re.search(r"\breset|\brestore|\bdefault|\brevert", low):
        return [Instruction("reset_apn_settings", {}, text)]
    if re.search(_SIM, low) and _RESEAT.search(low):
        return [Instruction("reseat_sim_card", {}, text)]
    if re.search(_VPN, low):
        if re.search(r"\bdisconnect|\boff\b|\bdisable|\bdeactivate|\bstop", low):
            return [Instruction("disconnect_vpn", {}, text)]
        if re.search(r"\bconnect|\bon\b|\benable|\bactivate", low):
            return [Instruction("connect_vpn", {}, text)]
        return [Unclear(text, "what to do with the VPN")]
    switch = _switch(low)
    if switch is not None:
        label, _words, tool, _field = switch
        # direction read around the setting's own words, so "turn off airplane mode, turn on
        # data" gives each its own
        want: bool | None = None
        on, off = _ON.search(low), _OFF.search(low)
        if off and not on:
            want = False
        elif on and not off:
            want = True
        elif on and off:
            want = on.end() < off.end()
        if want is None and not re.search(r"\btoggle|\bflip|\bswitch\b", low):
            return [Unclear(text, f"whether to turn {label} on or off")]
        return [Instruction(tool, {}, text, want=want, label=label)]
    if re.search(r"\breset\b.*\bnetwork settings\b", low):
        return [Instruction("reset_apn_settings", {}, text)]
    return []


def read_device(text: str, installed: list[str]) -> list[Instruction | Unclear]:
    """What the assistant asks the user to do or to check on the phone, in order.

    Each clause is an instruction or, failing that, a request to look at something; "it" and a
    bare "back on" stand for the setting the message named last ("Airplane mode is on. Please
    turn it off, then back on.").
    """
    out: list[Instruction | Unclear] = []
    last: str | None = None  # the words of the setting named last
    for sentence in acts.sentences(text):
        low = clean(sentence)
        if (_AGENT_SELF.search(low) and not _TO_USER.search(low)) or AGENT_SIDE.search(
            sentence.lower()
        ):  # the assistant's own step or proposal, or the line on its side
            last = _last_object(low, installed) or last
            continue
        asks = bool(ASKS_USER.search(low))
        if not (asks or DIRECTIVE.search(low)):  # a statement ("it is set to 3G only")
            last = _last_object(low, installed) or last
            continue
        found: list[Instruction | Unclear] = []
        for part in _CLAUSE.split(low):
            if last and not _last_object(part, installed):
                if _ACTION_VERB.search(part) and re.search(r"\b(?:it|that|this|them)\b", part):
                    part = f"{part} {last}"
                elif re.search(r"^\W*(?:then\W+)?(?:turn it |switch it |put it )?(?:back )?"
                               r"(?:on|off)\b", part):  # fmt: skip
                    part = f"turn {part} {last}"
            got = _clause(part, sentence, installed, low)
            if not got and asks:
                got = _check_clause(part, sentence, installed)
            found += got
            last = _last_object(part, installed) or last
        if any(isinstance(f, Instruction) for f in found):
            found = [f for f in found if isinstance(f, Instruction)]
        for item in found:  # one sentence saying a step twice asks for it once
            if not out or out[-1].to_json() != item.to_json() or out[-1].text != item.text:
                out.append(item)
    return out


def _app_perms(low: str, whole: str, installed: list[str]) -> tuple[list[str], list[str]]:
    """The apps and the permissions a clause names (the app may be named elsewhere in the
    sentence: "open the messaging app's settings and grant storage")."""
    apps = _apps(low, installed) or _apps(whole, installed)
    # the app's own mention goes first, so "text messaging" still names the SMS permission
    rest = re.sub(r"\b(?:messag\w*|messages|sms|texting) app\b", " ", low)
    for app in apps:
        rest = re.sub(rf"(?<!text )\b{re.escape(app)}(?: app)?\b(?! permission)", " ", rest)
    return apps, [p for p, words in _PERMISSIONS if re.search(words, rest)]


def _last_object(low: str, installed: list[str]) -> str | None:
    """What "it" would stand for after ``low``: the setting (or an app's permission) named
    last, as words the lexicon reads back."""
    best: tuple[int, str] | None = None
    for label, words in [(e[0], e[1]) for e in SWITCHES] + _NOUNS:
        for m in re.finditer(words, low):
            if best is None or m.start() > best[0]:
                best = (m.start(), label.lower())
    perm = _PERMISSION.search(low)
    if perm and (best is None or perm.start() > best[0]):
        apps, perms = _app_perms(low, low, installed)
        if len(apps) == 1 and perms:
            best = (perm.start(), f"the {' and '.join(perms)} permission of the {apps[0]} app")
    return None if best is None else best[1]


def _check_clause(part: str, sentence: str, installed: list[str]) -> list[Instruction | Unclear]:
    check = _check(part)
    if check is None:
        return []
    tool, args = check
    if tool == "data_usage":
        return [Instruction(tool, {}, sentence)]
    if tool == "check_app_permissions":
        apps = _apps(part, installed)
        if len(apps) != 1:
            return [Unclear(sentence, "which app")]
        args = {"app_name": apps[0]}
    return [Instruction(tool, args, sentence)]


def _check(low: str) -> tuple[str, dict[str, Any]] | None:
    if not _CHECK_VERB.search(low) or _FACT_QUESTION.search(low):
        return None
    for words, tool in CHECKS:
        if re.search(words, low):
            return tool, {}
    return None
