"""The symbolic user of tau2's telecom tasks: a customer who acts on their own phone.

tau2's weak point is its LLM user (it invents tool results, acts before it is asked, leaves
early); this user is deterministic. Its facts (name, phone number, where it is) come from the
task's ``known_info`` and ``set_user_info``; what it accepts comes from the gold actions and the
scenario (the gold refuel amount and nothing else, a bill payment when the scenario pays one,
roaming on the line when it is abroad, never a plan change); a proposal naming several writes
gets a yes only if it wants every one. A fact the scenario does not give is said to be missing,
never made up.

The assistant's message is read twice: the simulated-user reader of
:mod:`palaestra.envs.runtimes.simuser` finds the dialogue acts (a question for a fact, a
proposal, a report, goodbye), and this module's device lexicon finds what the assistant asks it
to do or to look at on the phone, clause by clause and in order ("reset the APN settings and
then reboot" must not reboot first), with "it" standing for the setting named last. Only what
is addressed to the user acts: a statement ("your phone is set to 3G only") or the assistant's
own step ("roaming needs to be enabled on your line") never touches the phone. Each instruction
becomes a call of the user's own tool (``world.call("user", ...)``) and the reply reports what
the tool answered, never more; a switch already where the assistant wants it is left alone and
said to be so, as the phone's state shows. An instruction the lexicon cannot map (no setting
named, a network mode it does not know) is asked back and logged ``unread``.

The user closes the conversation when its own check of the goal the scenario sets passes (an
``Excellent`` speed test, an MMS that can be sent, a status bar with signal): it runs that check
when asked, and by itself when the assistant says the fix is done or asks whether there is
anything else. A failed check before anything was changed is a diagnosis and only reported; a
failed check after a change is a failed attempt (mild frustration once, as the scenario says).
It also leaves when it is transferred to a human agent, or told goodbye. Several instructions
in one message are carried out in the order given (tau2's user asks for one at a time;
following them all is kinder to agents and changes no outcome).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from palaestra.envs.runtimes.simuser import acts
from palaestra.envs.runtimes.simuser.domain import Domain, Slot, by_name
from palaestra.envs.tau2.tasks import gold_actions
from palaestra.envs.tau2.user import UserTurn
from palaestra.envs.tau2.world import Tau2World

PHONE = r"(?<!\d)(\(?\d{3}\)?[ .-]?\d{3}[ .-]?\d{4})(?!\d)"


class TelecomDomain(Domain):
    """The facts a telecom customer is asked for, in the reader's terms."""

    name = "tau2-telecom"
    slots = by_name(
        Slot(
            "phone_number",
            "phone number",
            ("phone number", "mobile number", "cell number", "telephone number", "number"),
            pattern=PHONE,
        ),
        Slot("full_name", "full name", ("full name", "your name", "name")),
        Slot(
            "location",
            "location",
            ("location", "where are you", "abroad", "travelling", "traveling", "country"),
        ),
        Slot(
            "gb_amount",
            "amount of data",
            ("how much data", "how many gb", "how many gigabytes", "amount of data"),
            pattern=r"(\d+(?:\.\d+)?)\s*(?:GB|gb|gigabytes?)\b",
        ),
    )


DOMAIN = TelecomDomain()

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
_DIRECTIVE = re.compile(
    r"(?:^|:)\W*(?:(?:and|so|now|next|ok|okay|first|then|also|lastly|finally|great|please)\W+)*"
    r"(?:turn|switch|toggle|flip|enable|disable|activate|deactivate|set|change|reset|reboot|"
    r"restart|reseat|re-seat|reinsert|re-insert|remove|take|disconnect|connect|grant|allow|"
    r"restore|update|select|choose|pick|give|pay|accept|exit|put|go|open|make sure|ensure|"
    r"check|run|try|look|tell|send)\b|"
    r"\b(?:step is to|you (?:need|have|should|must|will need|'ll need) to|go ahead and|"
    r"let's|lets|(?:needs?|has|have|must|should) (?:to )?be \w+ed)\b"
)
#: the line or account, on the assistant's side: "roaming needs to be enabled on your line"
_AGENT_SIDE = re.compile(
    r"\b(?:on|for|to) (?:your|the) (?:line|account|plan)\b(?!.*\b(?:phone|device|settings)\b)|"
    r"\bline l\d+\b|\bsend (?:you )?(?:a |the )?payment request\b"
)
#: the assistant asking what the problem is
_ASKS_PROBLEM = re.compile(
    r"\b(?:how (?:can|may|could) i (?:help|assist)|"
    r"what (?:seems to be|is|'s) the (?:problem|issue)|"
    r"what(?:'s| is) (?:wrong|going on|happening)|what can i (?:do|help)|describe (?:the|your) "
    r"(?:problem|issue)|what (?:problem|issue))"
)
#: a question for a fact the user may be asked but does not know (its scenario gives none)
_UNKNOWN_FACT = re.compile(
    r"\b(?:customer id|account (?:id|number)|date of birth|birthday|e-?mail(?: address)?|"
    r"(?:home |billing )?address|zip(?: code)?|pin|puk|imei|bill id|line id|plan id|device id|"
    r"passport(?: number)?|social security(?: number)?|ssn|(?:mother's )?maiden name|password|"
    r"security (?:question|answer|code)|(?:credit |debit )?card number|cvv|driver's licen[cs]e)\b",
    re.IGNORECASE,
)
#: a number or name that is not the phone number or the user's own name
_NAMED_ELSE = re.compile(
    r"\b(?!phone|mobile|cell|telephone|contact|your|the|my|a\b)\w+ number\b|"
    r"\b(?:maiden|user|app) name\b"
)
#: the words that name a slot outright, where another number or name is also asked for
_OWN_WORDS = {
    "phone_number": r"\b(?:phone|mobile|cell|telephone|contact) number\b",
    "full_name": r"\b(?:full|your|first|last) name\b",
}
#: the steps an anxious user worries about
_DRASTIC = frozenset({"reboot_device", "reset_apn_settings", "reseat_sim_card"})
_SENT_REQUEST = re.compile(r"\b(?:sent|send|sending|issued)\b.*\bpayment request\b")
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

_TRANSFER = re.compile(
    r"\btransfer\w*\b.*\b(?:human|agent|specialist|technical support|representative)\b|"
    r"\b(?:human|live) agent\b.*\b(?:transfer|connect)\w*"
)
_FIXED = re.compile(
    r"\b(?:should (?:now )?(?:be )?(?:fixed|resolved|working|work)|(?:is|are) (?:now )?"
    r"(?:fixed|resolved)|try (?:it )?again|(?:fix|resolve)d? (?:the|your) (?:issue|problem)|"
    r"all set|that should (?:do it|help|fix))\b"
)
#: a sentence that asks the user something (a question, an instruction), not a statement
_ASKS_USER = re.compile(
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
_BEING_TRANSFERRED = re.compile(
    r"\b(?:i(?:'m| am|'ve| have| will|'ll) (?:now )?transferr?\w*|(?:being|been) transferred|"
    r"connecting you)\b"
)
_ASKS_CONSENT = re.compile(
    r"\b(?:shall|should) i\b|\bwould you like\b|\bdo you want\b|\bwant me to\b|\bmay i\b|"
    r"\bcan i\b|\bok(?:ay)? (?:to|if)\b"
)
_REFUEL = re.compile(
    r"refuel|top[ -]?up|\b(?:add(?:ing)?|more|extra|additional)\b.*\b(?:gb|data)\b"
)
_PAYMENT_REQUEST = re.compile(
    r"payment request|send (?:you )?a (?:payment|bill)|pay (?:the|your) bill"
)
_GB = re.compile(r"(\d+(?:\.\d+)?)\s*(?:gb|gigabytes?)\b")


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


def _clean(sentence: str) -> str:
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
        if _OFF.search(low) and not _ON.search(low):
            want = False
        elif _ON.search(low) and not _OFF.search(low):
            want = True
        elif _ON.search(low) and _OFF.search(low):
            on_at = _ON.search(low).end()  # type: ignore[union-attr]
            off_at = _OFF.search(low).end()  # type: ignore[union-attr]
            want = on_at < off_at
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
        low = _clean(sentence)
        if (_AGENT_SELF.search(low) and not _TO_USER.search(low)) or _AGENT_SIDE.search(
            sentence.lower()
        ):  # the assistant's own step or proposal, or the line on its side
            last = _last_object(low, installed) or last
            continue
        asks = bool(_ASKS_USER.search(low))
        if not (asks or _DIRECTIVE.search(low)):  # a statement ("it is set to 3G only")
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


#: a requested fact must name it: the reader's lexicon hears a phone number in "on your phone"
_NAMED = {"phone_number": r"\bnumber\b", "full_name": r"\bname\b"}


def _plausible(heard: list[acts.Act]) -> list[acts.Act]:
    """The reader's acts, less requests for a fact the sentence does not name, and guesses
    beside a request the sentence names outright."""
    out = []
    for act in heard:
        named = _NAMED.get(act.slot or "")
        if act.kind == acts.REQUEST and named and not re.search(named, act.text.lower()):
            continue
        if (
            act.kind == acts.REQUEST
            and act.alternatives
            and any(
                a.kind == acts.REQUEST and not a.alternatives and a.text == act.text for a in heard
            )
        ):
            continue
        out.append(act)
    return out


def first_person(text: str) -> str:
    """The scenario's second person as the user says it ("Your phone" -> "My phone")."""
    subs = (
        (r"\bYou are\b", "I am"),
        (r"\byou are\b", "I am"),
        (r"\bYou (?=mobile|phone|data|internet|line)", "My "),
        (r"\bYour\b", "My"),
        (r"\byour\b", "my"),
        (r"\bYou\b", "I"),
        (r"\byou\b", "me"),
    )
    for pattern, repl in subs:
        text = re.sub(pattern, repl, text)
    return text


def _text_of(content: str) -> str:
    return " ".join(line.strip() for line in content.splitlines() if line.strip())


class TelecomUser:
    """A telecom customer who answers from its facts and acts on its phone when asked.

    ``seed`` is taken for the protocol only: the user is the same under every seed, so three
    runs of a task must agree and a failure is the agent's, not a draw's.
    """

    def __init__(self, task: dict[str, Any], seed: int = 0) -> None:
        self.task = task
        self.seed = seed
        self.log: list[dict[str, Any]] = []
        scenario = task["user_scenario"]["instructions"]
        self.reason: str = scenario["reason_for_call"]
        self.known: str = scenario.get("known_info") or ""
        self.rules: str = scenario.get("task_instructions") or ""
        info: dict[str, Any] = {}
        abroad: bool | None = None
        for action in (task.get("initial_state") or {}).get("initialization_actions") or []:
            if action["func_name"] == "set_user_info":
                info = dict(action.get("arguments") or {})
            if action["func_name"] == "set_user_location":
                abroad = bool((action.get("arguments") or {}).get("abroad"))
        phone = re.search(PHONE, self.known)
        name = re.search(r"You are ([A-Z][\w'-]+(?: [A-Z][\w'-]+)+)", self.known)
        self.phone: str | None = info.get("phone_number") or (phone.group(1) if phone else None)
        self.name: str | None = info.get("name") or (name.group(1) if name else None)
        place = re.search(r"currently ([^.]+)", self.known)
        self.place: str | None = place.group(1).strip() if place else None
        self.abroad = abroad if abroad is not None else bool(self.place and "abroad" in self.place)
        low_reason = self.reason.lower()
        if "mms" in low_reason:
            self.goal = "mms"
        elif "service" in low_reason or "signal" in low_reason:
            self.goal = "service"
        else:
            self.goal = "speed"
        gold = gold_actions(task)
        names = {a["name"] for a in gold}
        refuel = [a for a in gold if a["name"] == "refuel_data"]
        willing = re.search(r"refuel (\d+(?:\.\d+)?) ?GB", self.rules)
        self.refuel: float | None = (
            float(refuel[0]["arguments"]["gb_amount"])
            if refuel
            else (float(willing.group(1)) if willing else None)
        )
        self.pays = bool(names & {"make_payment", "send_payment_request"}) or bool(
            re.search(r"asks you to pay a bill, you accept", self.rules)
        )
        persona = (task["user_scenario"].get("persona") or "").lower()
        #: tau2's anxious persona ("'reboot the phone' can trigger worries about losing precious
        #: photos"): wording only, said once, never a fact about the phone
        self.anxious = "flustered" in persona or "overwhelmed" in persona
        self.worried = False
        self.solved = False
        self.frustrated = False
        #: it has changed something on its phone (or been told a fix is done): a failed check
        #: of its goal is then a failed attempt, not a first diagnosis
        self.attempted = False
        self.stated: set[str] = set()

    # --- the protocol
    def opening(self) -> str:
        return first_person(self.reason.strip())

    def reply(self, message: str, world: Tau2World) -> UserTurn:
        installed = self._installed(world)
        device = read_device(message, installed)
        consumed = {item.text for item in device}
        rest = [s for s in acts.sentences(message) if s not in consumed]
        heard = _plausible(acts.read(DOMAIN, " ".join(rest))) if rest else []
        entry: dict[str, Any] = {
            "message": message,
            "heard": [a.to_json() for a in heard],
            "said": [],
        }
        entry["heard"] += [d.to_json() for d in device]
        parts: list[str] = []
        calls: list[dict[str, Any]] = []
        agreed = closed = unread = False
        said: list[str] = entry["said"]
        low = message.lower()

        if self._transferred(low):
            said.append("transfer")
            turn = UserTurn("Okay, I'll hold for the human agent. Thank you.", closed=True)
            return self._done(entry, turn)

        for sentence in rest:  # a fact its scenario does not give: said so, never made up
            unknown = [m.group(0) for m in _UNKNOWN_FACT.finditer(sentence)]
            if unknown and _ASKS_USER.search(_clean(sentence)):
                parts.append(f"Sorry, I can't give you my {' or my '.join(unknown)}.")
                said.append("fact:unknown")
        for act in heard:
            own = _OWN_WORDS.get(act.slot or "")
            if own and _NAMED_ELSE.search(act.text) and not re.search(own, act.text, re.IGNORECASE):
                continue  # "passport number" is not a phone number
            if act.kind == acts.REQUEST and act.slot is not None:
                parts.append(self._fact(act.slot))
                said.append(f"fact:{act.slot}")
        if not any(a.kind == acts.REQUEST and a.slot for a in heard) and re.search(
            r"\b(?:where are you|are you (?:currently )?(?:abroad|traveling|travelling|at home|in "
            r"the|outside)|your (?:current )?location)\b",
            low,
        ):
            parts.append(self._fact("location"))
            said.append("fact:location")

        ran_goal = False
        for item in device:
            if isinstance(item, Unclear):
                parts.append(f"Sorry, I'm not sure what you want me to do: {item.what}?")
                said.append("clarify")
                unread = True
                continue
            text, ran = self._perform(item, world, calls)
            parts.append(text)
            said.append(f"did:{item.tool}")
            ran_goal = ran_goal or ran

        asked = any(a.kind == acts.REQUEST and a.slot for a in heard)
        proposal = [] if asked else self._proposal(" ".join(rest), heard)
        confirms = [a for a in heard if a.kind == acts.CONFIRM]
        if proposal:
            ok, text = self._answer(proposal, " ".join(rest))
            parts.append(text)
            said.append("agree" if ok else "decline")
            agreed = ok
        elif confirms and any(a.values.get("phone_number") for a in confirms):
            given = {re.sub(r"\D", "", v) for a in confirms for v in a.values["phone_number"]}
            right = given == {re.sub(r"\D", "", self.phone or "")}
            parts.append("That's right." if right else self._fact("phone_number"))
            said.append("confirm_fact" if right else "correct_fact")
        elif confirms and not device and not _ASKS_PROBLEM.search(low):
            parts.append("Okay, please tell me what I should do.")
            said.append("ack")

        verify = not ran_goal and (
            bool(_FIXED.search(low))
            or (
                any(a.kind in (acts.ANYTHING_ELSE, acts.DONE) for a in heard)
                and not device
                and not proposal
            )
        )
        if verify and not calls:
            self.attempted = True  # told the fix is done: its own check is the attempt's
            text, ran = self._perform(self._goal_check(), world, calls)
            parts.append(text)
            said.append("verify")
            ran_goal = True
        if ran_goal:
            if self.solved:
                parts.append("That's fixed it, thank you so much for your help. Goodbye!")
                said.append("bye")
                closed = True
            elif complaint := self._not_yet():
                parts.append(complaint)
                said.append("not_solved")
        elif any(a.kind == acts.BYE for a in heard) and not parts:
            parts.append("Okay, goodbye.")
            said.append("bye")
            closed = True

        if not parts and _ASKS_PROBLEM.search(low):
            parts.append(self.opening() if not self.solved else "My problem is solved, thanks.")
            said.append("problem")
        if not parts and not proposal and _SENT_REQUEST.search(low):
            parts.append(self._perform(Instruction("check_payment_request", {}, ""), world,
                                       calls)[0])  # fmt: skip
            said.append("did:check_payment_request")
        if not parts:
            if (
                any(a.kind == acts.UNREAD for a in heard)
                or acts._expects(message)
                or any(_DIRECTIVE.search(_clean(s)) for s in acts.sentences(message))
            ):
                parts.append("Sorry, I didn't quite follow. What would you like me to do?")
                said.append("clarify")
                unread = True
            else:
                parts.append(self._restate())
                said.append("restate")
        turn = UserTurn(" ".join(parts), closed=closed, agreed=agreed, calls=calls)
        entry["unread"] = unread
        return self._done(entry, turn)

    # --- pieces
    def _done(self, entry: dict[str, Any], turn: UserTurn) -> UserTurn:
        entry["text"] = turn.text
        entry["calls"] = [{"name": c["name"], "arguments": c["arguments"]} for c in turn.calls]
        entry.setdefault("unread", False)
        self.log.append(entry)
        return turn

    def _transferred(self, low: str) -> bool:
        if "you are being transferred" in low:
            return True
        if not _TRANSFER.search(low):
            return False
        return bool(_BEING_TRANSFERRED.search(low))

    def _installed(self, world: Tau2World) -> list[str]:
        try:
            return list(world.state()["user"]["device"]["app_statuses"])
        except (KeyError, TypeError):
            return []

    def _fact(self, slot: str) -> str:
        self.stated.add(slot)
        if slot == "phone_number" and self.phone:
            return f"My phone number is {self.phone}."
        if slot == "full_name" and self.name:
            return f"My name is {self.name}."
        if slot == "location":
            if self.place:
                return f"I'm {self.place}."
            return "I'm not travelling." if not self.abroad else "I'm abroad."
        if slot == "gb_amount" and self.refuel is not None:
            return f"I'd like to add {self.refuel:g} GB of data."
        label = DOMAIN.slots[slot].label
        return f"Sorry, I don't have my {label} to hand."

    def _call(self, world: Tau2World, calls: list[dict[str, Any]], tool: str, args: dict) -> str:
        res = world.call("user", tool, args)
        calls.append(
            {"name": tool, "arguments": dict(args), "content": res.content, "error": res.error}
        )
        return res.content

    def _perform(
        self, item: Instruction, world: Tau2World, calls: list[dict[str, Any]]
    ) -> tuple[str, bool]:
        """Do one instruction on the phone; the reply and whether the goal's check ran."""
        if item.tool == "data_usage":
            return "My phone doesn't show me my data usage.", False
        if item.tool == "make_payment" and not self.pays:
            return "I'd rather not make a payment right now.", False
        if item.want is not None:
            field = next(f for _l, _w, t, f in SWITCHES if t == item.tool)
            now = bool(world.state()["user"]["device"][field])
            if now == item.want:
                state = "on" if now else "off"
                label = f"{item.label[0].upper()}{item.label[1:]}"
                return f"{label} is already {state}.", False
        if (
            self.goal == "service"
            and item.tool == "check_network_status"
            and re.search(r"\b(?:service|signal)\b", item.text.lower())
            and not re.search(
                r"network (?:status|settings|connection)|airplane|mobile data|roaming",
                item.text.lower(),
            )
        ):  # its scenario: "always check the status bar if asked for status information"
            item = Instruction("check_status_bar", {}, item.text)
        content = self._call(world, calls, item.tool, item.arguments)
        worry = ""
        if self.anxious and not self.worried and item.tool in _DRASTIC:
            self.worried, worry = True, "Oh dear, I hope I won't lose my photos. "
        if not item.tool.startswith(("check_", "run_", "can_")):
            self.attempted = True
        goal_tool = self._goal_check().tool
        ran = item.tool == goal_tool or (
            self.goal == "service" and item.tool == "check_network_status"
        )
        if ran:
            self.solved = self._met(item.tool, content)
        if item.tool == "run_speed_test":
            return f"I ran a speed test: {_text_of(content)}", ran
        if item.tool == "can_send_mms":
            return f"I tried: {_text_of(content)}", ran
        if item.tool.startswith("check_"):
            return f"I checked: {_text_of(content)}", ran
        return f"{worry}Done. My phone says: {_text_of(content)}", ran

    def _goal_check(self) -> Instruction:
        tool = {"speed": "run_speed_test", "mms": "can_send_mms", "service": "check_status_bar"}
        return Instruction(tool[self.goal], {}, "")

    def _met(self, tool: str, content: str) -> bool:
        if self.goal == "speed":
            return tool == "run_speed_test" and "(Excellent)" in content
        if self.goal == "mms":
            return tool == "can_send_mms" and " can send MMS" in content
        if tool == "check_network_status":
            return "Cellular Connection: connected" in content
        return "📶" in content and "No Signal" not in content

    def _not_yet(self) -> str:
        want = {
            "speed": "I need an excellent internet speed",
            "mms": "I still can't send MMS messages",
            "service": "I still don't have any signal",
        }[self.goal]
        if not self.attempted:
            return ""
        text = f"That doesn't solve my problem: {want}."
        if not self.frustrated:
            self.frustrated = True
            text += " This is a bit frustrating."
        return text

    def _restate(self) -> str:
        if self.solved:
            return "Thanks, my problem is solved."
        # what it wants, never a claim about the phone it has not just looked at
        return {
            "speed": "What should I do next to get an excellent internet speed?",
            "mms": "What should I do next to be able to send MMS messages?",
            "service": "What should I do next to get service on my phone?",
        }[self.goal]

    def _proposal(self, message: str, heard: list[acts.Act]) -> list[str]:
        """What the assistant proposes to do itself (each write it names), if the message asks
        consent for it."""
        low = _clean(message)
        consent = (
            any(a.kind in (acts.CONFIRM, acts.OFFER) for a in heard)
            or bool(_ASKS_CONSENT.search(low))
            # a bare question naming a write on its side: "Enable roaming on your line?"
            or any(
                s.rstrip().endswith("?") and _AGENT_SIDE.search(s.lower())
                for s in acts.sentences(message)
            )
        )
        if not consent:
            return []
        found = []
        if re.search(r"\bplan\b", low) and re.search(r"chang|switch|upgrad|move|new plan", low):
            found.append("change_plan")
        if _REFUEL.search(low):
            found.append("refuel_data")
        if _PAYMENT_REQUEST.search(low):
            found.append("send_payment_request")
        if re.search(r"\b(?:resume|reactivate|restore|unsuspend|lift)\b", low):
            found.append("resume_line")
        elif re.search(r"\bsuspend(?:ing)?\b", low):
            found.append("suspend_line")
        if re.search(r"roaming", low) and re.search(r"\b(?:disable|turn off|remove)\b", low):
            found.append("disable_roaming")
        elif re.search(r"roaming", low):
            found.append("enable_roaming")
        if re.search(r"transfer|human agent", low):
            found.append("transfer_to_human_agents")
        return found

    def _answer(self, proposals: list[str], text: str) -> tuple[bool, str]:
        """Yes to a proposal only when every write it names is one the user wants; offered
        alternatives ("add data, or change your plan: which do you prefer?"), it picks the one
        it wants."""
        verdicts = [self._consider(p, text) for p in proposals]
        choice = len(proposals) > 1 and bool(
            re.search(r"\bor\b", text.lower())
            and re.search(r"\b(?:which|prefer|rather|either)\b", text.lower())
        )
        if choice and any(ok for ok, _ in verdicts):
            return True, " ".join(t for ok, t in verdicts if ok)
        if all(ok for ok, _ in verdicts):
            return True, " ".join(t for _, t in verdicts)
        return False, " ".join(t for ok, t in verdicts if not ok)

    def _consider(self, proposal: str, message: str) -> tuple[bool, str]:
        low = message.lower()
        if proposal == "refuel_data":
            if self.refuel is None:
                return False, "No thanks, I don't want to buy more data."
            amounts = [float(x) for x in _GB.findall(low)]
            if not amounts:
                return False, f"I'd like {self.refuel:g} GB of data. How much would that cost?"
            if any(abs(a - self.refuel) < 1e-9 for a in amounts) and len(set(amounts)) == 1:
                return True, f"Yes, please add {self.refuel:g} GB of data."
            return False, f"No, I only want to add {self.refuel:g} GB of data."
        if proposal == "change_plan":
            return False, "No, I don't want to change my plan."
        if proposal == "send_payment_request":
            if self.pays:
                return True, "Yes, please send me the payment request."
            return False, "No, I don't want to pay anything right now."
        if proposal == "resume_line":
            if self.goal == "service":
                return True, "Yes, please resume my line."
            return False, "No, please leave my line as it is."
        if proposal == "enable_roaming":
            if self.abroad:
                return True, "Yes, please enable roaming on my line."
            return False, "No, I'm not travelling, I don't need roaming."
        if proposal == "transfer_to_human_agents":
            return True, "Yes, please transfer me."
        return False, "No, I don't want that."
