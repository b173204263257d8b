"""An optional LLM author: any OpenAI-compatible chat endpoint, given by URL and key.

The procedural path needs no model. With an author, synthesis can (1) reword instructions, so a
policy does not learn one template's phrasing, and (2) propose a new app spec from a one-line
idea. Nothing the model writes is trusted: a reworded instruction is kept only if it still
states every grounded value verbatim (else the template's wording stays), and a proposed spec
must pass the same schema checks as a hand-written one and then the same execution validation
as every task. The author speaks plain HTTP (httpx) to ``<url>/chat/completions``.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import yaml

from palaestra.synth_apps.spec import DOMAINS_DIR, AppSpec, SpecError, load_spec

_FENCE = re.compile(r"```(?:yaml|yml|json)?\s*\n(.*?)```", re.DOTALL)


class LLMError(RuntimeError):
    """The endpoint could not be reached or answered something unusable."""


class LLMAuthor:
    def __init__(
        self, url: str, key: str | None = None, model: str = "gpt-4o-mini", timeout: float = 120
    ) -> None:
        self.url = url.rstrip("/")
        self.model = model
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._http = httpx.Client(timeout=timeout, headers=headers)

    def chat(self, system: str, user: str, temperature: float = 0.7) -> str:
        body = {
            "model": self.model,
            "temperature": temperature,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        }
        endpoint = f"{self.url}/chat/completions"
        try:
            reply = self._http.post(endpoint, json=body)
        except httpx.HTTPError as exc:
            raise LLMError(f"LLM endpoint {endpoint} unreachable: {type(exc).__name__}") from None
        # the endpoint and the status only: a reply's body is never quoted into an error
        if reply.status_code >= 400:
            raise LLMError(f"LLM endpoint {endpoint} answered {reply.status_code}")
        try:
            return str(reply.json()["choices"][0]["message"]["content"])
        except (ValueError, KeyError, IndexError, TypeError):
            raise LLMError(
                f"LLM endpoint {endpoint} answered {reply.status_code} with no chat completion"
            ) from None

    def paraphrase(self, instruction: str, keep: list[str]) -> str | None:
        """A reworded instruction that keeps every value in ``keep`` verbatim, or None."""
        text = (
            self.chat(
                "You reword task instructions for an agent that uses apps. Keep every quoted "
                "value, name, number, date and code exactly as written. Answer with the "
                "instruction only.",
                f"Reword: {instruction}\nValues that must appear unchanged: {keep}",
            )
            .strip()
            .strip('"')
        )
        if not text or len(text) > 4 * len(instruction) + 200:
            return None
        return text if all(v in text for v in keep) else None

    def propose_spec(self, idea: str, retries: int = 1) -> AppSpec:
        """A new AppSpec for ``idea``; the schema's error goes back to the model once."""
        example = (DOMAINS_DIR / "train.yaml").read_text()
        prompt = (
            f"Write a palaestra AppSpec in YAML for: {idea}\n"
            "Follow this example's format exactly (same keys; expressions in Python syntax):\n"
            f"```yaml\n{example}```\nAnswer with one ```yaml block."
        )
        error = ""
        for _ in range(retries + 1):
            text = self.chat(
                "You design small web apps as declarative specs.",
                prompt + (f"\nYour last spec was rejected: {error}" if error else ""),
                temperature=0.2,
            )
            try:
                return load_spec(_yaml(text))
            except (SpecError, yaml.YAMLError, ValueError) as exc:
                error = str(exc)[:2000]
        raise SpecError(f"the LLM's spec for {idea!r} was rejected: {error}")

    def close(self) -> None:
        self._http.close()


def _yaml(text: str) -> dict[str, Any]:
    match = _FENCE.search(text)
    data = yaml.safe_load(match.group(1) if match else text)
    if not isinstance(data, dict):
        raise ValueError("the answer holds no YAML mapping")
    return data
