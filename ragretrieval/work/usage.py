"""The one token and cost counter of everything that calls a paid API: the LLM client (answers, judges, question
writing) and the embeddings API. Shared by threads (every change holds a lock), picklable (a Dask worker gets a
copy without the lock, and a fresh lock on arrival)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass
class TokenCount:
    """Requests made, tokens paid for (input and output), answers served from a cache (they cost nothing), and what
    the requests cost in dollars."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: int = 0
    cost: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def record(self, prompt_tokens: int, completion_tokens: int = 0, cost: float = 0.0) -> None:
        """One request answered and paid for."""
        with self._lock:
            self.requests += 1
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
            self.cost += cost

    def record_cached(self) -> None:
        """One answer served from the cache: no request, no tokens, no cost."""
        with self._lock:
            self.cached += 1

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def status(self) -> str:
        """One line for a progress bar."""
        return f"tokens {self.tokens:,}" + (f", ${self.cost:.4f}" if self.cost else "")

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _lock=threading.Lock())
