"""Chat models behind one small interface, with a registry and a scripted fake for tests.

The refinement issue adds the real clients (OpenAI-compatible, replay, offline generator);
retrieval only needs `complete()`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable, Iterable

Message = dict  # {"role": "system" | "user" | "assistant", "content": str}


@dataclass
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str = ""


def estimate_tokens(text: str) -> int:
    """About four characters a token for English and code: enough for budgets and reports."""
    return max(1, (len(text) + 3) // 4)


class ChatModel(ABC):
    name: str = "model"

    @abstractmethod
    def complete(self, messages: list[Message], *, max_tokens: int = 512, temperature: float = 0.0) -> Completion:
        ...


MODELS: dict[str, Callable[..., ChatModel]] = {}


def register(name: str):
    def wrap(factory):
        MODELS[name] = factory
        return factory
    return wrap


def get_model(name: str, **options) -> ChatModel:
    try:
        factory = MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}: choose one of {', '.join(sorted(MODELS))}") from None
    return factory(**options)


@register("scripted")
@dataclass
class ScriptedModel(ChatModel):
    """Answers from a list, in order (or from a function of the messages): deterministic."""

    answers: list[str] | Callable[[list[Message]], str] = field(default_factory=list)
    name: str = "scripted"
    calls: list[list[Message]] = field(default_factory=list)

    def complete(self, messages: list[Message], *, max_tokens: int = 512, temperature: float = 0.0) -> Completion:
        self.calls.append(list(messages))
        if callable(self.answers):
            text = self.answers(messages)
        elif len(self.calls) <= len(self.answers):
            text = self.answers[len(self.calls) - 1]
        else:
            text = ""
        prompt = sum(estimate_tokens(m["content"]) for m in messages)
        return Completion(text, prompt, estimate_tokens(text) if text else 0, self.name)


def scripted(answers: Iterable[str]) -> ScriptedModel:
    return ScriptedModel(list(answers))
