"""MiniWoB's oracles by task name (:data:`ORACLES`) and the ``miniwob`` policy that plays one.

A MiniWoB task's ``oracle`` is ``{"policy": "miniwob", "data": "<task name>"}``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from palaestra.envs.web.policies import apps, clicking, forms, reckoning, widgets
from palaestra.tasks import Task

#: MiniWoB task name -> its oracle (observation -> action); tasks not named here have none
ORACLES: dict[str, Callable[[dict[str, Any]], str]] = {
    "click-button": clicking.click_button,
    "unicode-test": clicking.click_button,
    "click-test": clicking.click_test,
    "click-test-2": clicking.click_named,
    "click-test-transfer": clicking.click_named,
    "click-button-sequence": clicking.click_button_sequence,
    "click-link": clicking.click_link,
    "click-dialog": clicking.click_dialog,
    "click-dialog-2": clicking.click_dialog_2,
    "click-checkboxes": clicking.click_checkboxes,
    "click-checkboxes-large": clicking.click_checkboxes,
    "click-checkboxes-transfer": clicking.click_checkboxes,
    "click-option": clicking.click_option,
    "click-tab": clicking.click_tab,
    "click-tab-2": clicking.click_tab_2,
    "click-tab-2-easy": clicking.click_tab_2,
    "click-tab-2-medium": clicking.click_tab_2,
    "click-tab-2-hard": clicking.click_tab_2,
    "click-collapsible": clicking.click_collapsible,
    "click-collapsible-nodelay": clicking.click_collapsible,
    "click-collapsible-2": clicking.click_collapsible_2,
    "click-collapsible-2-nodelay": clicking.click_collapsible_2,
    "click-widget": clicking.click_widget,
    "enter-text": forms.enter_text,
    "enter-text-dynamic": forms.enter_text,
    "enter-text-2": forms.enter_text_2,
    "enter-password": forms.enter_password,
    "login-user": forms.login_user,
    "login-user-popup": forms.login_user,
    "enter-date": forms.enter_date,
    "enter-time": forms.enter_time,
    "focus-text": forms.focus_text,
    "focus-text-2": forms.focus_text_2,
    "choose-list": forms.choose_list,
    "click-scroll-list": forms.click_scroll_list,
    "use-spinner": forms.use_spinner,
    "simple-arithmetic": reckoning.simple_arithmetic,
    "simple-algebra": reckoning.simple_algebra,
    "find-word": reckoning.find_word,
    "read-table": reckoning.read_table,
    "read-table-2": reckoning.read_table_2,
    "text-transform": reckoning.text_transform,
    "copy-paste": forms.copy_paste,
    "copy-paste-2": forms.copy_paste_2,
    "form-sequence-2": forms.form_sequence_2,
    "multi-layouts": forms.multi_layouts,
    "multi-orderings": forms.multi_layouts,
    "guess-number": reckoning.guess_number,
    "odd-or-even": reckoning.odd_or_even,
    "click-menu": clicking.click_menu,
    "generate-number": reckoning.generate_number,
    "buy-ticket": apps.buy_ticket,
    "use-autocomplete": widgets.use_autocomplete,
    "use-autocomplete-nodelay": widgets.use_autocomplete,
    "order-food": apps.order_food,
    "search-engine": apps.search_engine,
    "phone-book": apps.phone_book,
    "form-sequence-3": widgets.form_sequence_3,
    "terminal": apps.terminal,
    "choose-date": widgets.choose_date,
    "choose-date-easy": widgets.choose_date,
    "choose-date-medium": widgets.choose_date,
    "choose-date-nodelay": widgets.choose_date,
    "book-flight": apps.book_flight,
    "book-flight-nodelay": apps.book_flight,
    "use-slider": widgets.use_slider,
    "form-sequence": widgets.form_sequence,
    "scroll-text-2": forms.scroll_text_2,
    **{
        f"email-inbox{variant}": apps.email_inbox
        for variant in (
            *("", "-delete", "-forward", "-forward-nl", "-important", "-noscroll", "-reply"),
            "-star-reply",
        )
    },
}


class MiniWobPolicy:
    """The oracle of a MiniWoB task: ``task.oracle.data`` names the task (or ``task=`` does).

    Its oracles are stateless (see the module's docstring), so one instance may answer for
    several episodes of the task at once, e.g. every member of a pool.
    """

    def __init__(self, task: str | None = None) -> None:
        self.fixed = task
        self.oracle: Callable[[dict[str, Any]], str] | None = None

    def reset(self, task: Task | None) -> None:
        name = self.fixed
        if name is None and task is not None and task.oracle is not None:
            name = str(task.oracle.data)
        if name is None:
            raise KeyError("name the MiniWoB task: task.oracle.data or MiniWobPolicy(task=...)")
        name = name.removeprefix("miniwob/")
        if name not in ORACLES:
            raise KeyError(f"no oracle for {name!r}; oracles exist for {sorted(ORACLES)}")
        self.oracle = ORACLES[name]

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        assert self.oracle is not None, "reset() first"
        return self.oracle(observation)
