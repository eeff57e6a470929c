"""Model tokens and what they cost: of one agent, of a request several agents share, or of a run."""

from __future__ import annotations

from pydantic import Field

from review_gate.models.base import Frozen

CACHED_TOKENS_IN = "Input tokens read from the provider's prompt cache (part of tokens_in)."
CACHE_WRITE_TOKENS_IN = "Input tokens written to the provider's prompt cache (part of tokens_in)."
REASONING_TOKENS = "Output tokens the model spent on hidden reasoning (part of tokens_out)."
UNPRICED_TOKENS = ("Tokens of a model review-gate.json's prices has no price for: cost_usd leaves them out, and "
                   "every format says the cost is unpriced (never $0).")


class Usage(Frozen):
    """Model tokens and their cost: of one agent, or summed over the run's agents."""

    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    cached_tokens_in: int = Field(default=0, ge=0, description=CACHED_TOKENS_IN)
    cache_write_tokens_in: int = Field(default=0, ge=0, description=CACHE_WRITE_TOKENS_IN)
    reasoning_tokens: int = Field(default=0, ge=0, description=REASONING_TOKENS)
    unpriced_tokens: int = Field(default=0, ge=0, description=UNPRICED_TOKENS)

    def __add__(self, other: Usage) -> Usage:
        return Usage(tokens_in=self.tokens_in + other.tokens_in, tokens_out=self.tokens_out + other.tokens_out,
                     cost_usd=self.cost_usd + other.cost_usd,
                     cached_tokens_in=self.cached_tokens_in + other.cached_tokens_in,
                     cache_write_tokens_in=self.cache_write_tokens_in + other.cache_write_tokens_in,
                     reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
                     unpriced_tokens=self.unpriced_tokens + other.unpriced_tokens)

    def cost_text(self) -> str:
        """The cost as every format shows it: never $0 for tokens of a model with no price.

        >>> Usage(cost_usd=0.0123).cost_text(), Usage(unpriced_tokens=900).cost_text()
        ('$0.0123', 'unpriced')
        >>> Usage(cost_usd=0.5, unpriced_tokens=900).cost_text()
        '$0.5000 + unpriced (900 tokens of models with no price)'
        """
        if not self.unpriced_tokens:
            return f"${self.cost_usd:.4f}"
        if not self.cost_usd:
            return "unpriced"
        return f"${self.cost_usd:.4f} + unpriced ({self.unpriced_tokens} tokens of models with no price)"

    def rounded(self) -> Usage:
        """Its cost to the micro-dollar, as reports show it (sums are kept exact until then)."""
        return self.model_copy(update={"cost_usd": round(self.cost_usd, 6)})

    def split(self, parts: int) -> list[Usage]:
        """``parts`` shares that add up to it exactly (a request several agents shared): tokens as
        evenly as whole numbers allow, the first shares taking the remainder; cost in proportion.

        >>> [u.tokens_in for u in Usage(tokens_in=10).split(3)]
        [4, 3, 3]
        """
        counted = ("tokens_in", "tokens_out", "cached_tokens_in", "cache_write_tokens_in", "reasoning_tokens",
                   "unpriced_tokens")
        values = self.model_dump()
        return [Usage(cost_usd=self.cost_usd / parts,
                      **{name: values[name] // parts + (1 if index < values[name] % parts else 0) for name in counted})
                for index in range(parts)]


__all__ = ["CACHED_TOKENS_IN", "CACHE_WRITE_TOKENS_IN", "REASONING_TOKENS", "UNPRICED_TOKENS", "Usage"]
