"""A soul's configuration: one TOML file per soul, every key optional.

Each mechanism keeps its own defaults in its own Struct (hygiene, attention, recall,
context...); this module only gathers them. Unknown keys are rejected everywhere.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from souls.collision.lightning import LightningConfig
from souls.collision.presentation_gate import GateConfig
from souls.collision.tide import TideConfig
from souls.embed.config import EmbeddingConfig
from souls.intake.attention_gate import AttentionConfig
from souls.intake.hygiene_gate import HygieneConfig
from souls.intake.surprise import SurpriseConfig
from souls.knowledge.claim_llm import ExtractionConfig
from souls.knowledge.knowledge import KnowledgeConfig
from souls.llm.answer import AnswerConfig
from souls.llm.chat import LLMConfig
from souls.mind.decay import DecayConfig
from souls.mind.hebbian import HebbianConfig
from souls.mind.homeostasis import HomeostasisConfig
from souls.mind.metacognition import MetacognitionConfig
from souls.mind.reflection import ReflectConfig
from souls.mind.somatic import SomaticConfig
from souls.recall.context import ContextConfig
from souls.recall.potential import PotentialConfig
from souls.recall.recall import RecallConfig

__all__ = [
    "LifecycleConfig",
    "MailboxConfig",
    "RestartConfig",
    "ScheduleOverrides",
    "SoulConfig",
    "StoreConfig",
]


class _Section(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    pass


class MailboxConfig(_Section, frozen=True):
    # Messages the mailbox holds before senders wait (or get "busy").
    capacity: int = 1024
    # Most messages handled in one turn, and so committed in one transaction.
    batch: int = 512
    # Events per transaction in a bulk import.
    import_batch: int = 2000

    def __post_init__(self) -> None:
        if self.capacity < 1 or self.batch < 1 or self.import_batch < 1:
            raise ValueError("capacity, batch and import_batch must be at least 1")


class StoreConfig(_Section, frozen=True):
    # SQLite synchronous level. "normal" (with WAL) keeps every committed event through
    # a crash or kill -9 of the daemon; "full" also through a power loss, at a cost.
    synchronous: Literal["normal", "full", "extra"] = "normal"


class RestartConfig(_Section, frozen=True):
    # A soul that crashes more than max_restarts times within max_seconds is stopped
    # (and reported failed) instead of being restarted again.
    max_restarts: int = 3
    max_seconds: float = 5.0
    # Seconds a stopping soul may spend draining its mailbox and committing.
    shutdown: float = 10.0

    def __post_init__(self) -> None:
        if self.max_restarts < 0 or self.max_seconds <= 0 or self.shutdown < 0:
            raise ValueError("max_restarts must be >= 0, max_seconds > 0 and shutdown >= 0")


class LifecycleConfig(_Section, frozen=True):
    # Seconds without mail after which the soul hibernates: it closes its database and
    # drops its caches; the next message wakes it (nothing queued is lost). Scheduled
    # jobs, task syncs and health checks do not count as mail that keeps it awake.
    # A soul that may hibernate also starts hibernated. 0: never (always open).
    hibernate_after: float = 300.0

    def __post_init__(self) -> None:
        if not self.hibernate_after >= 0:
            raise ValueError("hibernate_after must be >= 0 (0: never hibernate)")


class ScheduleOverrides(_Section, frozen=True):
    # This soul's own times for the scheduled jobs; unset keys follow [schedule] in
    # soupd.toml (same meaning and format there).
    timezone: str | None = None
    decay: str | None = None
    weekly_day: str | None = None
    weekly: str | None = None
    homeostasis_minutes: float | None = None


class SoulConfig(_Section, frozen=True):
    # Where SOUL.md, MEMORY.md, TASKS.md live; default: <state dir>/souls/<name>/.
    brain_dir: str | None = None
    # false: a plain memory store - no surprise, reflect, somatic markers or Hebbian
    # edges (recall is BM25 alone). For archive souls, and to measure what thinking costs.
    cognition: bool = True
    mailbox: MailboxConfig = msgspec.field(default_factory=MailboxConfig)
    store: StoreConfig = msgspec.field(default_factory=StoreConfig)
    restart: RestartConfig = msgspec.field(default_factory=RestartConfig)
    lifecycle: LifecycleConfig = msgspec.field(default_factory=LifecycleConfig)
    hygiene: HygieneConfig = msgspec.field(default_factory=HygieneConfig)
    attention: AttentionConfig = msgspec.field(default_factory=AttentionConfig)
    recall: RecallConfig = msgspec.field(default_factory=RecallConfig)
    context: ContextConfig = msgspec.field(default_factory=ContextConfig)
    surprise: SurpriseConfig = msgspec.field(default_factory=SurpriseConfig)
    reflect: ReflectConfig = msgspec.field(default_factory=ReflectConfig)
    hebbian: HebbianConfig = msgspec.field(default_factory=HebbianConfig)
    decay: DecayConfig = msgspec.field(default_factory=DecayConfig)
    somatic: SomaticConfig = msgspec.field(default_factory=SomaticConfig)
    homeostasis: HomeostasisConfig = msgspec.field(default_factory=HomeostasisConfig)
    metacognition: MetacognitionConfig = msgspec.field(default_factory=MetacognitionConfig)
    llm: LLMConfig = msgspec.field(default_factory=LLMConfig)
    schedule: ScheduleOverrides = msgspec.field(default_factory=ScheduleOverrides)
    lightning: LightningConfig = msgspec.field(default_factory=LightningConfig)
    gate: GateConfig = msgspec.field(default_factory=GateConfig)
    tide: TideConfig = msgspec.field(default_factory=TideConfig)
    knowledge: KnowledgeConfig = msgspec.field(default_factory=KnowledgeConfig)
    extraction: ExtractionConfig = msgspec.field(default_factory=ExtractionConfig)
    answer: AnswerConfig = msgspec.field(default_factory=AnswerConfig)
    potential: PotentialConfig = msgspec.field(default_factory=PotentialConfig)
    embedding: EmbeddingConfig = msgspec.field(default_factory=EmbeddingConfig)

    def __post_init__(self) -> None:
        if self.llm.base_url is None and self.answer.enabled:
            raise ValueError("answer.enabled needs an LLM: set [llm] base_url and model")
        if self.llm.base_url is None:
            for key, value in (
                ("reflect.reflector", self.reflect.reflector),
                ("gate.judge", self.gate.judge),
            ):
                if value == "llm":
                    raise ValueError(
                        f'{key} = "llm" needs an LLM: set [llm] base_url and model, or use "auto"'
                    )
