"""Gateway settings: from arguments, ``PALAESTRA_*`` environment variables or a YAML/JSON file.

pydantic-settings reads the environment: ``PALAESTRA_<FIELD>`` (case-insensitive; empty values
are ignored), lists as comma-separated strings (``PALAESTRA_API_KEYS=k1,k2``), mappings as JSON
(``PALAESTRA_RAY_WORKER_RESOURCES='{"GPU": 1}'``). Values given as arguments win over the
environment, which wins over the defaults.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from palaestra.options import OperatorConfig, origin
from palaestra.paths import home
from palaestra.server import defaults

_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


def key_digest(key: str) -> str:
    """``sha256:<hex>`` of an API key (a digest in that form is returned as it is)."""
    if _DIGEST.match(key):
        return key
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="PALAESTRA_",
        env_ignore_empty=True,
        extra="forbid",
        # a refused setting is reported without the values (an LLM key must not reach a log)
        hide_input_in_errors=True,
    )

    host: str = "127.0.0.1"
    port: int = defaults.PORT
    backend: Literal["local", "docker", "ray"] = defaults.BACKEND
    #: a worker (process or container) silent on its heartbeat this long is hung: replaced
    heartbeat_s: float = Field(default=15.0, gt=0)
    #: Docker backend: the worker image (built by docker/build.sh), the engine (None: the
    #: environment's DOCKER_HOST or the default socket), each container's limits
    docker_image: str = "palaestra/core"
    docker_host: str | None = None
    docker_worker_cpus: float = Field(default=1.0, gt=0)
    docker_worker_memory_mb: int = Field(default=2048, ge=64)
    docker_worker_pids: int = Field(default=512, ge=16)
    #: names this gateway's containers (their label), so a restart sweeps only its own orphans
    gateway_name: str = Field(default="default", pattern=r"^[a-zA-Z0-9_.-]+$")
    #: Ray backend: the cluster to join (``host:port``, or None to start one on this machine)
    ray_address: str | None = None
    #: Ray backend: ``spread`` puts workers on different nodes first, ``pack`` fills nodes
    ray_placement: Literal["spread", "pack"] = "spread"
    #: Ray backend: what each worker actor asks of its node
    ray_worker_cpus: float = Field(default=1.0, ge=0)
    ray_worker_memory_mb: int | None = Field(default=None, ge=1)
    ray_worker_resources: dict[str, float] = Field(default_factory=dict)
    #: Ray backend: the address this gateway's Ray driver announces (loopback on one machine)
    ray_node_ip: str = "127.0.0.1"
    workers: int = Field(default=defaults.WORKERS, ge=1, le=256)
    #: API keys; empty means no authentication, which is only allowed on loopback. Held as
    #: ``sha256:<hex>`` digests once read (a digest given in that form is taken as it is)
    api_keys: Annotated[list[str], NoDecode] = Field(default_factory=list)
    #: a file of API keys, one a line (``#`` comments), added to ``api_keys``: keeps keys off
    #: the command line, which every local user can read in /proc
    api_keys_file: Path | None = None
    #: serve /v1/health's details (workers, pids, sessions) and /metrics without an API key;
    #: by default they need one when keys are configured (the bare status never does)
    public_monitoring: bool = False
    #: local backend: run worker processes as this user (name or uid) when the gateway runs as
    #: root. The computer and cad families need a root worker today (their sandbox switches to
    #: per-session uids); the other families run unprivileged. None: the gateway's own user
    worker_user: str | None = None
    #: the interpreter local workers run on (default: the gateway's own). Set it with
    #: ``worker_user`` when the gateway's Python lives where that account cannot read (a
    #: pyenv under /root): e.g. a venv of the system Python with palaestra installed
    worker_python: str | None = None
    max_sessions: int = Field(default=256, ge=1)
    max_sessions_per_key: int = Field(default=64, ge=1)
    max_body_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)
    #: JSON nesting a body or a WebSocket message may have (checked before it is parsed):
    #: deeper is a 422 naming the limit; orjson itself writes at most 254 levels
    max_json_depth: int = Field(default=64, ge=2, le=250)
    #: a connection must have sent a request's whole headers this long after it opened (or
    #: after its first byte of a next request); a client trickling them is disconnected
    header_timeout_s: float = Field(default=10.0, gt=0)
    #: a request's whole body must have arrived this long after its headers (408 otherwise)
    body_timeout_s: float = Field(default=60.0, gt=0)
    #: an idle keep-alive connection (between requests) is closed after this long
    keep_alive_s: int = Field(default=60, ge=1)
    #: serve /docs, /redoc and /openapi.json; None (the default): only when no API keys are
    #: configured (a keyed gateway shows its API to no stranger unless the operator says so)
    public_docs: bool | None = None
    #: peers (IPs or networks) whose ``X-Forwarded-Proto`` is believed: a TLS-terminating proxy
    #: in front of the gateway. The dashboard's cookie is ``Secure`` when the request came over
    #: TLS, directly or through one of them
    trusted_proxies: Annotated[list[str], NoDecode] = Field(default_factory=list)
    #: calls queued on one session beyond the running one; more are refused with 429
    max_waiting_per_session: int = Field(default=8, ge=0)
    step_timeout_s: float = Field(default=60.0, gt=0)
    create_timeout_s: float = Field(default=120.0, gt=0)
    idle_timeout_s: float = Field(default=900.0, gt=0)
    record: bool = True
    runs_dir: Path = Field(default_factory=lambda: home() / "runs")
    run_id: str = "live"
    #: the episode catalog (server/episodes.py); default ``<runs_dir>/.catalog.sqlite3``
    catalog_db: Path | None = None
    #: retention, per run (0: no limit): its recordings' total size and age; the oldest
    #: sessions go first, and every deletion is logged (server/retention.py)
    run_max_mb: float = Field(default=0.0, ge=0)
    run_max_age_days: float = Field(default=0.0, ge=0)
    retention_every_s: float = Field(default=600.0, gt=0)
    #: where synthesis jobs write suites; put on PALAESTRA_SUITE_PATH for gateway and workers
    suites_dir: Path = Field(default_factory=lambda: home() / "suites")
    #: synthesis jobs running at once (each one is CPU-heavy). Slots are shared fairly between
    #: keys (server/jobs.py): a key under its share waits for the next free slot, one at or
    #: over it is refused with 429
    synth_jobs: int = Field(default=1, ge=1, le=64)
    #: the job store (synthesis and evaluation jobs), kept across restarts
    jobs_db: Path = Field(default_factory=lambda: home() / "jobs.sqlite3")
    #: evaluation jobs running at once, shared between keys as synthesis jobs are
    eval_jobs: int = Field(default=2, ge=1, le=64)
    #: where evaluation jobs write their results (``<evals_dir>/<job_id>/``)
    evals_dir: Path = Field(default_factory=lambda: home() / "evals")
    # ----- operator-only settings of envs (never a client's session option) -----------------
    #: computer family: the agent-code sandbox's limits, JSON (``{"memory_mb": 1024}``)
    computer_limits: dict[str, float] = Field(default_factory=dict)
    #: origins (``scheme://host:port``) workers may call: Appium servers and LLM endpoints
    outbound_allow: Annotated[list[str], NoDecode] = Field(default_factory=list)
    #: mobile family: the Appium server a ``backend: "appium"`` session uses, its capabilities
    appium_url: str | None = None
    appium_capabilities: dict[str, Any] = Field(default_factory=dict)
    #: usersim family: the LLM endpoint a ``user: "llm"`` session uses, its key and model
    llm_url: str | None = None
    llm_key: SecretStr | None = None
    #: a file holding the LLM key (read at start; keeps the key out of the environment)
    llm_key_file: Path | None = None
    llm_model: str = "gpt-4o-mini"

    @model_validator(mode="after")
    def _endpoints_allowed(self) -> Settings:
        """An outbound endpoint off the allow-list is refused when the gateway starts."""
        if self.llm_key_file is not None and self.llm_key is None:
            self.llm_key = SecretStr(self.llm_key_file.read_text().strip())
        operator = self.operator()
        for name in ("appium_url", "llm_url"):
            url = getattr(self, name)
            if url and not operator.allowed(url):
                raise ValueError(
                    f"{name} {origin(url)} is not on outbound_allow (PALAESTRA_OUTBOUND_ALLOW)"
                )
        return self

    def operator(self) -> OperatorConfig:
        """The operator's env settings, handed to workers by the gateway (never the client):
        each field of :class:`OperatorConfig` is the setting of the same name."""
        return OperatorConfig(**{name: getattr(self, name) for name in OperatorConfig.model_fields})

    @field_validator("api_keys", "outbound_allow", "trusted_proxies", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        """``PALAESTRA_API_KEYS=k1,k2``, ``PALAESTRA_OUTBOUND_ALLOW=origin1,origin2``,
        ``PALAESTRA_TRUSTED_PROXIES=10.0.0.2,10.1.0.0/16``."""
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        for net in value:
            try:
                ipaddress.ip_network(net, strict=False)
            except ValueError:
                raise ValueError(
                    f"trusted_proxies: {net!r} is not an IP address or network"
                ) from None
        return value

    def docs_public(self) -> bool:
        """Whether /docs and /openapi.json are served (``public_docs``, else: no keys)."""
        return not self.api_keys if self.public_docs is None else self.public_docs

    def trusted_proxy(self, host: str | None) -> bool:
        """Whether a peer is one of ``trusted_proxies`` (its forwarded scheme is believed)."""
        if not host or not self.trusted_proxies:
            return False
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(ip in ipaddress.ip_network(n, strict=False) for n in self.trusted_proxies)

    @model_validator(mode="after")
    def _hash_keys(self) -> Settings:
        """Read the key file and keep only digests of the keys in memory."""
        keys = list(self.api_keys)
        if self.api_keys_file is not None:
            try:
                text = Path(self.api_keys_file).read_text()
            except OSError as exc:
                raise ValueError(f"cannot read api_keys_file: {exc.strerror}") from None
            keys += [ln.strip() for ln in text.splitlines() if ln.strip() and ln[:1] != "#"]
        self.api_keys = list(dict.fromkeys(key_digest(k) for k in keys))
        return self

    @classmethod
    def from_env(cls, **overrides: Any) -> Settings:
        """``overrides`` beat ``PALAESTRA_<FIELD>`` variables, which beat the defaults; a
        config file's values are passed in as overrides below the command line's. (The same
        as ``Settings(**overrides)``, with None meaning "not given".)"""
        return cls(**{k: v for k, v in overrides.items() if v is not None})

    def check_bind(self) -> None:
        """Refuse to expose an unauthenticated gateway beyond this machine."""
        if self.api_keys:
            return
        if self.host == "localhost":
            return
        try:
            loopback = ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise SystemExit(
                f"refusing to bind to {self.host} without API keys: set PALAESTRA_API_KEYS "
                "(or --api-key-file) or bind to 127.0.0.1"
            )
