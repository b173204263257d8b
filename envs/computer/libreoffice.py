"""LibreOffice on the desktop: the ``calc``, ``writer`` and ``impress`` apps and their profile.

Decisions:

- The apps are Debian's LibreOffice with the GTK 3 VCL plugin (``SAL_USE_VCLPLUGIN=gtk3`` in
  the sandbox's environment, so a ``soffice`` the agent starts from the shell gets it too): its
  accessibility bridge (ATK) talks to the sandbox's AT-SPI bus like the other GTK apps, so the
  ``a11y_tree`` names cells, menus and dialogs. Started inside the session's sandbox like every
  app, with ``--norestore`` (no document recovery) and ``--nologo``.
- The user profile starts from :data:`XCU` (our settings: no tip of the day, no first-start
  wizard, no what's-new or donation bars, no autosave or recovery, no update check, macros never
  run, en-US), written into the template home. A first start on that profile still costs
  seconds (LibreOffice syncs its bundled extensions, runs its graphics tests, then restarts
  itself), so the first office reset of a worker warms it once: ``soffice --headless
  --terminate_after_init`` inside that session's sandbox, before any agent action, and the
  resulting profile is kept (:func:`warm_profile`) and put into every template home of the
  worker from then on. Measured by ``bench/office.py``.
- Nothing of LibreOffice runs outside the sandbox: the warm-up runs in it as the session's user,
  and the host only copies the files it made (plain files and folders, no links followed).
- A document that carries macros never runs them: ``DisableMacrosExecution`` (and the highest
  macro security level) in the profile; no Python script provider is installed either.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

#: where the profile lives in the home (LibreOffice's default for the ``4`` profile layout)
PROFILE = ".config/libreoffice"
#: app name -> (argv, the window class of its document window)
#: (``SAL_USE_VCLPLUGIN=gtk3`` is in every sandbox process's environment: ``Sandbox.user_env``)
OFFICE = ["soffice", "--norestore", "--nologo"]
APPS: dict[str, tuple[list[str], str]] = {
    "calc": ([*OFFICE, "--calc"], "libreoffice-calc"),
    "writer": ([*OFFICE, "--writer"], "libreoffice-writer"),
    "impress": ([*OFFICE, "--impress"], "libreoffice-impress"),
}
#: the first start of a profile can take this long on a loaded machine
WARM_TIMEOUT_S = 60.0

_SCRIPTING = "/org.openoffice.Office.Common/Security/Scripting"
_UPDATE_CHECK = "/org.openoffice.Office.Jobs/Jobs/org.openoffice.Office.Jobs:Job['UpdateCheck']"
_SETTINGS = (
    # path, property, type, value
    ("/org.openoffice.Setup/Office", "ooSetupInstCompleted", "boolean", "true"),
    ("/org.openoffice.Setup/Office", "FirstStartWizardCompleted", "boolean", "true"),
    ("/org.openoffice.Setup/L10N", "ooLocale", "string", "en-US"),
    ("/org.openoffice.Setup/L10N", "ooSetupSystemLocale", "string", "en-US"),
    ("/org.openoffice.Setup/Product", "ooSetupLastVersion", "string", "99.0"),  # no what's-new
    ("/org.openoffice.Setup/Product", "LastTimeDonateShown", "long", "4102444800"),
    ("/org.openoffice.Setup/Product", "LastTimeGetInvolvedShown", "long", "4102444800"),
    ("/org.openoffice.Office.Common/Misc", "FirstRun", "boolean", "false"),
    ("/org.openoffice.Office.Common/Misc", "ShowTipOfTheDay", "boolean", "false"),
    ("/org.openoffice.Office.Common/Misc", "CrashReport", "boolean", "false"),
    (_SCRIPTING, "MacroSecurityLevel", "int", "3"),
    (_SCRIPTING, "DisableMacrosExecution", "boolean", "true"),
    ("/org.openoffice.Office.Recovery/AutoSave", "Enabled", "boolean", "false"),
    ("/org.openoffice.Office.Recovery/RecoveryInfo", "Enabled", "boolean", "false"),
    ("/org.openoffice.Office.Impress/Misc", "StartWithTemplate", "boolean", "false"),
    (f"{_UPDATE_CHECK}/Arguments", "AutoCheckEnabled", "boolean", "false"),
)
XCU = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<oor:items xmlns:oor="http://openoffice.org/2001/registry" '
    'xmlns:xs="http://www.w3.org/2001/XMLSchema" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
    + "".join(
        f'<item oor:path="{path}"><prop oor:name="{name}" oor:op="fuse" oor:type="xs:{kind}">'
        f"<value>{value}</value></prop></item>\n"
        for path, name, kind, value in _SETTINGS
    )
    + "</oor:items>\n"
)

_lock = threading.Lock()
_warm: Path | None = None  # the worker's warmed profile (a folder of the host, root's)


def is_office(apps: list[list[str]]) -> bool:
    return any(app and app[0] in APPS for app in apps)


def write_settings(home: Path) -> None:
    """Our settings as a fresh profile in ``home`` (what a first start builds on)."""
    user = home / PROFILE / "4/user"
    user.mkdir(parents=True, exist_ok=True)
    (user / "registrymodifications.xcu").write_text(XCU)


def warmed() -> Path | None:
    """The worker's warmed profile, if one was made."""
    return _warm


def warm_profile(run: Callable[[list[str], float], None], home: Path) -> Path:
    """The worker's warmed profile, made now if there is none: ``run(argv, timeout)`` runs
    ``soffice`` headless in the session's live sandbox (whose fresh ``home`` holds
    :func:`write_settings`' profile), then what it made in the home is copied out."""
    global _warm
    with _lock:
        if _warm is not None:
            return _warm
        argv = ["soffice", "--headless", "--norestore", "--terminate_after_init"]
        # the first start restarts itself once (extensions synced), the second settles it
        for _ in range(2):
            run(argv, WARM_TIMEOUT_S)
        src = home / PROFILE
        if src.is_symlink() or not src.is_dir():
            raise RuntimeError("the LibreOffice warm-up made no profile")
        dest = Path(tempfile.mkdtemp(prefix="palaestra-soffice-profile-"))
        shutil.rmtree(dest)
        # plain files and folders only (a link the warm-up left stays a link, never followed)
        shutil.copytree(src, dest, symlinks=True)
        for junk in ("4/.lock", "4/user/.lock", "4/safemode", "4/user/GraphicsRenderTests.log"):
            (dest / junk).unlink(missing_ok=True)
        _warm = dest
        return dest


def put_profile(home: Path) -> None:
    """The warmed profile (or just our settings) into a home being built (a template)."""
    target = home / PROFILE
    if target.exists():
        shutil.rmtree(target)
    if _warm is not None:
        subprocess.run(["cp", "-a", str(_warm), str(target)], check=True, capture_output=True)
    else:
        write_settings(home)
