"""What an API client may set on a ``palaestra/usersim-v0`` session: the dialogue runtime's
options (:mod:`palaestra.envs.runtimes.dialogue.options`), under this family's name."""

from __future__ import annotations

from palaestra.envs.runtimes.dialogue.options import DialogueOptions


class UserSimOptions(DialogueOptions):
    """The simulated user's voice, persona and LLM fallback, and the observation's parts."""
