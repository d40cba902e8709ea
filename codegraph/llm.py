"""Language-model clients, below both `retrieval` and `refine`: chat models behind one small
interface, a registry, a scripted fake for tests, a replay model, and the OpenAI-compatible
plumbing that chat and embeddings share (one client factory, one deadline, one error mapping).

Retries are the openai client's own: it honours Retry-After and never retries 400/401/404.
A read timeout restarts on every byte, so every call also runs under one overall deadline and
is abandoned when it passes (a server trickling bytes cannot hold a run).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from .environment import getenv
from .errors import CodegraphError
from .registry import Registry

Message = dict  # {"role": "system" | "user" | "assistant", "content": str}

DEFAULT_TIMEOUT_SECONDS = 120.0  # one HTTP attempt (the client's read timeout restarts on every byte)
DEFAULT_CALL_SECONDS = 300.0  # one call, its retries included: the hard bound
DEFAULT_RETRIES = 3


@dataclass
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str = ""


def estimate_tokens(text: str) -> int:
    """About four characters a token for English and code: the one count every budget uses."""
    return max(1, (len(text) + 3) // 4) if text else 0


class ModelError(CodegraphError):
    """A model could not answer; the message says what to fix. `retryable` is False when asking
    again cannot help (a refused key, an unknown model, a rejected request)."""

    def __init__(self, message: str, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable


class ChatModel(ABC):
    name: str = "model"

    @abstractmethod
    def complete(self, messages: list[Message], *, max_tokens: int = 512, temperature: float | None = None,
                 deadline: float | None = None) -> Completion:
        """`deadline` is a time.monotonic() value the answer must arrive by."""


MODELS: Registry[ChatModel] = Registry("chat model", ModelError)
register = MODELS.register


def get_model(name: str, **options) -> ChatModel:
    return MODELS.create(name, **options)


def _prompt_tokens(messages: Iterable[Message]) -> int:
    return sum(estimate_tokens(m["content"]) for m in messages)


@register("scripted")
@dataclass
class ScriptedModel(ChatModel):
    """Answers from a list, in order (or from a function of the messages): deterministic."""

    answers: list[str] | Callable[[list[Message]], str] = field(default_factory=list)
    name: str = "scripted"
    calls: list[list[Message]] = field(default_factory=list)

    def complete(self, messages: list[Message], *, max_tokens: int = 512, temperature: float | None = None,
                 deadline: float | None = None) -> Completion:
        self.calls.append(list(messages))
        if callable(self.answers):
            text = self.answers(messages)
        elif len(self.calls) <= len(self.answers):
            text = self.answers[len(self.calls) - 1]
        else:
            text = ""
        return Completion(text, _prompt_tokens(messages), estimate_tokens(text), self.name)


def scripted(answers: Iterable[str]) -> ScriptedModel:
    return ScriptedModel(list(answers))


@register("replay")
class ReplayModel(ChatModel):
    """Answers from a recorded JSON file ({"completions": ["...", ...]}): reproducible runs."""

    def __init__(self, path: str) -> None:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            answers = data["completions"] if isinstance(data, dict) else data
            if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
                raise ValueError('expected {"completions": ["...", ...]}')
        except (OSError, ValueError, KeyError) as exc:
            raise ModelError(f"cannot read the replay file {path}: {exc}", retryable=False) from None
        self.answers = answers
        self.name = f"replay:{path}"
        self.position = 0

    def complete(self, messages: list[Message], *, max_tokens: int = 1024, temperature: float | None = None,
                 deadline: float | None = None) -> Completion:
        text = self.answers[self.position] if self.position < len(self.answers) else ""
        self.position += 1
        return Completion(text, _prompt_tokens(messages), estimate_tokens(text), self.name)


# -- OpenAI-compatible endpoints ----------------------------------------------------------------

MAX_CALL_BYTES = 8 << 20  # what one call (its retries included) may read: a chat answer is a few kB
MAX_TOTAL_BYTES = 256 << 20  # what one endpoint may send over its whole life


class ResponseTooLarge(Exception):
    """Raised while reading a body past its byte budget; the call is abandoned."""


class _Meter:
    """Bytes read, for one call and over the endpoint's life; reading past either limit raises."""

    def __init__(self, call_limit: float, total: "_Meter | None" = None, total_limit: float = MAX_TOTAL_BYTES) -> None:
        self.limit, self.total, self.total_limit = call_limit, total, total_limit
        self.read = 0
        self.exceeded: str | None = None

    def add(self, size: int) -> None:
        self.read += size
        if self.total is not None:
            self.total.read += size
        if self.read > self.limit:
            self.exceeded = "call"
        elif self.total is not None and self.total.read > self.total_limit:
            self.exceeded = "total"
        if self.exceeded:
            raise ResponseTooLarge(f"more than {self.limit if self.exceeded == 'call' else self.total_limit:.0f} bytes")


_current_meter = threading.local()  # the meter of the call running on this thread


def _capped_client(openai_module):
    """The openai client's own HTTP client (httpx, or httpx2 in openai 3), whose every response
    body is read through the current call's meter: an endpoint that streams without end cannot
    fill memory before the deadline."""
    client_class = openai_module.DefaultHttpxClient
    http = sys.modules[next(c.__module__ for c in client_class.__mro__[1:] if c.__name__ == "Client").split(".")[0]]

    class Capped(http.SyncByteStream):
        def __init__(self, inner, meter: _Meter) -> None:
            self.inner, self.meter = inner, meter

        def __iter__(self):
            for chunk in self.inner:
                self.meter.add(len(chunk))
                yield chunk

        def close(self) -> None:
            self.inner.close()

    def meter_response(response) -> None:
        meter = getattr(_current_meter, "meter", None)
        if meter is not None:
            response.stream = Capped(response.stream, meter)

    return client_class(event_hooks={"response": [meter_response]})


def openai_client(base_url: str | None, api_key: str | None, *, timeout_s: float, retries: int):
    try:
        import openai
    except ImportError:
        raise ModelError("the openai client is missing: pip install 'codegraph-duckdb[openai]'",
                         retryable=False) from None
    return openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s,
                         max_retries=retries, http_client=_capped_client(openai))


def describe_failure(exc: BaseException, url: str, what: str) -> ModelError:
    """One clear line for whatever the openai client raised, naming the endpoint."""
    import openai

    status = getattr(exc, "status_code", None)
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return ModelError(f"{url} refused the API key ({status}): check --api-key / CODEGRAPH_API_KEY",
                          retryable=False)
    if isinstance(exc, openai.NotFoundError):
        return ModelError(f"{url} does not know {what} (404), or the base URL is wrong: check --model and "
                          "--base-url", retryable=False)
    if isinstance(exc, (openai.BadRequestError, openai.UnprocessableEntityError)):
        return ModelError(f"{url} rejected the request ({status}): {_short(exc)}", retryable=False)
    if isinstance(exc, (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError,
                        openai.APIConnectionError, openai.ConflictError)):
        return ModelError(f"{url} failed after its retries: {type(exc).__name__}: {_short(exc)}")
    if isinstance(exc, openai.APIStatusError):
        return ModelError(f"{url} answered HTTP {status}: {_short(exc)}")
    return ModelError(f"{url} sent an answer that could not be used: {type(exc).__name__}: {_short(exc)}")


def _short(exc: BaseException, limit: int = 200) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def call_with_deadline(call: Callable[[], Any], deadline: float, *, url: str, what: str,
                       on_abandon: Callable[[], None] | None = None) -> Any:
    """Run `call` on a worker thread and wait until `deadline` (time.monotonic()); past it the
    call is abandoned (`on_abandon` closes its connection) and a ModelError says so."""
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc
        finally:
            done.set()

    started = time.monotonic()
    threading.Thread(target=work, daemon=True, name="codegraph-model-call").start()
    if not done.wait(max(0.0, deadline - started)):
        if on_abandon is not None:
            try:
                on_abandon()
            except Exception:
                pass
        raise ModelError(f"{url} gave no complete answer within {deadline - started:.0f} s "
                         f"(the deadline of this call); it was abandoned")
    if "error" in outcome:
        error = outcome["error"]
        if isinstance(error, ModelError):
            raise error
        if isinstance(error, Exception):
            raise describe_failure(error, url, what) from None
        raise error
    return outcome["value"]


class OpenAIEndpoint:
    """What chat and embeddings share: settings from options or the environment, a client that
    is replaced when a call had to be abandoned, and deadline-bounded calls."""

    def __init__(self, base_url: str | None, api_key: str | None, *, env_prefix: str = "CODEGRAPH",
                 timeout_s: float = DEFAULT_TIMEOUT_SECONDS, call_s: float = DEFAULT_CALL_SECONDS,
                 retries: int = DEFAULT_RETRIES, max_call_bytes: int = MAX_CALL_BYTES,
                 max_total_bytes: float = MAX_TOTAL_BYTES) -> None:
        self.max_call_bytes, self.max_total_bytes = max_call_bytes, max_total_bytes
        self._read = _Meter(max_total_bytes)  # over the endpoint's life
        self.base_url = base_url or getenv(f"{env_prefix}_BASE_URL") or getenv("OPENAI_BASE_URL")
        self._api_key = api_key or getenv("CODEGRAPH_API_KEY") or getenv("OPENAI_API_KEY")
        self.timeout_s, self.call_s, self.retries = timeout_s, call_s, retries
        self.url = self.base_url or "https://api.openai.com/v1"
        self._client = openai_client(self.base_url, self._api_key, timeout_s=timeout_s, retries=retries)

    def call(self, fn: Callable[[Any], Any], *, what: str, deadline: float | None = None) -> Any:
        limit = time.monotonic() + self.call_s
        deadline = limit if deadline is None else min(deadline, limit)
        if deadline <= time.monotonic():
            raise ModelError(f"no time left to ask {self.url}")
        client = self._client

        def abandon() -> None:
            self._client = openai_client(self.base_url, self._api_key, timeout_s=self.timeout_s,
                                         retries=self.retries)
            client.close()

        meter = _Meter(self.max_call_bytes, self._read, self.max_total_bytes)
        if self._read.read > self.max_total_bytes:
            raise ModelError(f"{self.url} has sent more than {self.max_total_bytes / 2**20:.0f} MB in all: no more "
                             "calls to it", retryable=False)

        def metered():
            _current_meter.meter = meter
            try:
                return fn(client)
            finally:
                _current_meter.meter = None

        try:
            return call_with_deadline(metered, deadline, url=self.url, what=what, on_abandon=abandon)
        except ModelError:
            if meter.exceeded == "call":
                raise ModelError(f"{self.url} sent more than {self.max_call_bytes >> 20} MB for one answer; it was "
                                 "not read further") from None
            if meter.exceeded == "total":
                raise ModelError(f"{self.url} has sent more than {self.max_total_bytes / 2**20:.0f} MB in all: no "
                                 "more calls to it", retryable=False) from None
            raise


@register("openai")
class OpenAIChat(ChatModel):
    """Any OpenAI-compatible chat endpoint: OpenAI, vLLM, Ollama, llama.cpp's server.

    Options, else environment: base_url (CODEGRAPH_BASE_URL, OPENAI_BASE_URL), api_key
    (CODEGRAPH_API_KEY, OPENAI_API_KEY), model (CODEGRAPH_MODEL).
    """

    def __init__(self, model: str | None = None, base_url: str | None = None, api_key: str | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_SECONDS, retries: int = DEFAULT_RETRIES,
                 temperature: float = 0.0, call_s: float = DEFAULT_CALL_SECONDS) -> None:
        self.model = model or getenv("CODEGRAPH_MODEL")
        if not self.model:
            raise ModelError("no model name: pass --model or set CODEGRAPH_MODEL", retryable=False)
        self.name = self.model
        self.endpoint = OpenAIEndpoint(base_url, api_key, timeout_s=timeout_s, call_s=call_s, retries=retries)
        self.temperature = temperature  # above 0 for several different answers per task (pass@k)

    def complete(self, messages: list[Message], *, max_tokens: int = 1024, temperature: float | None = None,
                 deadline: float | None = None) -> Completion:
        def ask(client):
            return client.chat.completions.create(
                model=self.model, messages=messages, max_tokens=max_tokens,
                temperature=self.temperature if temperature is None else temperature)

        response = self.endpoint.call(ask, what=f"model {self.model!r}", deadline=deadline)
        choices = getattr(response, "choices", None)
        if not isinstance(choices, list):
            kind = type(response).__name__
            preview = _short(str(response), 80) if isinstance(response, (str, bytes)) else kind
            raise ModelError(f"{self.endpoint.url} did not answer with a chat completion (got {kind}: {preview!r}): "
                             "check --base-url, it should end in /v1")
        message = getattr(choices[0], "message", None) if choices else None
        text = getattr(message, "content", None) or ""
        if not isinstance(text, str):
            raise ModelError(f"{self.endpoint.url} sent a chat completion without text content")
        usage = getattr(response, "usage", None)
        return Completion(text, getattr(usage, "prompt_tokens", 0) or _prompt_tokens(messages),
                          getattr(usage, "completion_tokens", 0) or estimate_tokens(text), self.model)
