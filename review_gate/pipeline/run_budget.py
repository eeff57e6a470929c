"""The run budget (``max_tokens``, ``max_cost_usd`` of review-gate.json): what the run's agents
have spent or reserved so far, and whether one more fits."""

from __future__ import annotations


class RunBudget:
    """Tokens and cost spent or reserved by the run's agents so far, against the run budget."""

    def __init__(self, max_tokens: int | None, max_cost: float | None) -> None:
        self.max_tokens = max_tokens
        self.max_cost = max_cost
        self.tokens = 0
        self.cost = 0.0

    @property
    def limited(self) -> bool:
        return self.max_tokens is not None or self.max_cost is not None

    def reserve(self, tokens: int, cost: float) -> str | None:
        """Reserve an agent's estimate; the reason it does not fit, if it does not."""
        if self.max_tokens is not None and self.tokens + tokens > self.max_tokens:
            return (f"run budget: about {tokens} more tokens would pass max_tokens {self.max_tokens} "
                    f"({self.tokens} spent or reserved)")
        if self.max_cost is not None and self.cost + cost > self.max_cost:
            return (f"run budget: about ${cost:.4f} more would pass max_cost_usd {self.max_cost:g} "
                    f"(${self.cost:.4f} spent or reserved)")
        self.tokens += tokens
        self.cost += cost
        return None

    def settle(self, reserved: tuple[int, float], spent: tuple[int, float]) -> None:
        self.tokens += spent[0] - reserved[0]
        self.cost += spent[1] - reserved[1]


__all__ = ["RunBudget"]
