"""Chat models behind one small interface, with a registry and a scripted fake for tests.

The refinement issue adds the real clients (OpenAI-compatible, replay, offline generator);
retrieval only needs `complete()`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable, Iterable

from ..registry import Registry

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


MODELS: Registry[ChatModel] = Registry("chat model")
register = MODELS.register


def get_model(name: str, **options) -> ChatModel:
    return MODELS.create(name, **options)


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


class ModelError(Exception):
    """A chat model could not answer; the message says what to fix."""


@register("openai")
class OpenAIChat(ChatModel):
    """Any OpenAI-compatible chat endpoint: OpenAI, vLLM, Ollama, llama.cpp's server.

    Options, else environment: base_url (CODEGRAPH_BASE_URL, OPENAI_BASE_URL), api_key
    (CODEGRAPH_API_KEY, OPENAI_API_KEY), model (CODEGRAPH_MODEL). Retries with exponential
    backoff on 429, 5xx, timeouts and connection errors; a bad key or an unknown model fails at
    once with a clear message.
    """

    def __init__(self, model: str | None = None, base_url: str | None = None, api_key: str | None = None,
                 timeout_s: float = 120.0, retries: int = 4, backoff_s: float = 1.0,
                 temperature: float = 0.0) -> None:
        import os

        try:
            import openai
        except ImportError:
            raise ModelError("the openai client is missing: pip install 'codegraph[openai]'") from None
        self.model = model or os.environ.get("CODEGRAPH_MODEL")
        if not self.model:
            raise ModelError("no model name: pass --model or set CODEGRAPH_MODEL")
        self.name = self.model
        base_url = base_url or os.environ.get("CODEGRAPH_BASE_URL") or os.environ.get("OPENAI_BASE_URL")
        api_key = api_key or os.environ.get("CODEGRAPH_API_KEY") or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self.client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0)
        self.retries, self.backoff_s = retries, backoff_s
        self.temperature = temperature  # above 0 for several different answers per task (pass@k)

    def complete(self, messages: list[Message], *, max_tokens: int = 1024, temperature: float | None = None) -> Completion:
        import time

        import openai

        for attempt in range(self.retries + 1):
            try:
                response = self.client.chat.completions.create(
                    model=self.model, messages=messages, max_tokens=max_tokens,
                    temperature=self.temperature if temperature is None else temperature)
                break
            except openai.AuthenticationError:
                raise ModelError("the endpoint refused the API key: check --api-key / CODEGRAPH_API_KEY") from None
            except openai.NotFoundError:
                raise ModelError(f"the endpoint does not know model {self.model!r} (or the base URL is wrong): "
                                 "check --model and --base-url") from None
            except (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError,
                    openai.InternalServerError) as exc:
                if attempt == self.retries:
                    raise ModelError(f"the endpoint failed {attempt + 1} times, last: {type(exc).__name__}: {exc}") from None
                time.sleep(self.backoff_s * 2 ** attempt)
            except (openai.APIError, ValueError) as exc:  # malformed answers and other protocol errors
                if attempt == self.retries:
                    raise ModelError(f"the endpoint's answer could not be used: {exc}") from None
                time.sleep(self.backoff_s * 2 ** attempt)
        choice = response.choices[0] if response.choices else None
        text = (choice.message.content if choice and choice.message else "") or ""
        usage = response.usage
        return Completion(text, getattr(usage, "prompt_tokens", 0) or sum(estimate_tokens(m["content"]) for m in messages),
                          getattr(usage, "completion_tokens", 0) or estimate_tokens(text), self.model)


@register("replay")
class ReplayModel(ChatModel):
    """Answers from a recorded JSON file ({"completions": ["...", ...]}): reproducible runs."""

    def __init__(self, path: str) -> None:
        import json
        from pathlib import Path

        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ModelError(f"cannot read the replay file {path}: {exc}") from None
        self.answers = list(data["completions"] if isinstance(data, dict) else data)
        self.name = f"replay:{path}"
        self.position = 0

    def complete(self, messages: list[Message], *, max_tokens: int = 1024, temperature: float = 0.0) -> Completion:
        text = self.answers[self.position] if self.position < len(self.answers) else ""
        self.position += 1
        return Completion(text, sum(estimate_tokens(m["content"]) for m in messages),
                          estimate_tokens(text) if text else 0, self.name)
