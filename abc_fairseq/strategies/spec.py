"""ABCAttentionSpec: one bounded-memory attention position, resolved and validated once.

A model turns its options into one spec per attention position (``models.abc_options`` reads
them, ``models.attention_specs`` builds the spec and registers its shared module); every layer of
that position builds its attention module from the same spec, and the module builds its strategy
with ``spec.build``.
"""

from dataclasses import dataclass
from typing import Optional, Type, Union

import torch.nn as nn

from .base import Strategy, StrategyOptions
from .registry import get_strategy


@dataclass(frozen=True)
class ABCAttentionSpec:
    """What a layer needs to build one bounded-memory attention.

    strategy: the Strategy class.
    memory_size: slots n (window length, feature size for kernels: see the strategy).
    in_dim, num_heads: the key input size and head count ``shared`` was built for.
    options: the strategy's own settings and the flags its errors name.
    shared: the module tied across the layers of the position (W_phi, a ``PhiProjection``, for
        the ABC_MLP family; the Linformer matrix), or None. The model registers it once (its one
        owner); spec and strategies only refer to it.
    backend: which implementation runs the ops ("auto", "torch" or "triton"; see
        ``ops.backend``), already resolved and validated by the model's option reader
        (``--abc-backend``, ``ABC_BACKEND``); every layer's strategy hands it to the ops as is.
    """

    strategy: Type[Strategy]
    memory_size: int
    in_dim: int
    num_heads: int
    options: StrategyOptions
    shared: Optional[nn.Module] = None
    backend: str = "auto"

    @classmethod
    def create(cls, strategy: Union[str, Type[Strategy]], memory_size: int, in_dim: int, num_heads: int,
               options: Optional[StrategyOptions] = None, shared: Optional[nn.Module] = None,
               mode: Optional[str] = None, backend: str = "auto") -> "ABCAttentionSpec":
        """Resolve and validate ``strategy`` (a registered name or class) and build its shared
        module unless ``shared`` is given (then it is checked). ``mode``: check it too."""
        options = options if options is not None else StrategyOptions()
        if isinstance(strategy, str):
            strategy = get_strategy(strategy, flag=options.flag("attn"))
        strategy.validate(memory_size, options, mode)
        if shared is None:
            shared = strategy.build_shared(in_dim, num_heads, memory_size, options)
        strategy.check_shared(shared, in_dim, num_heads, memory_size)
        return cls(strategy, memory_size, in_dim, num_heads, options, shared, backend)

    @property
    def name(self) -> str:
        return self.strategy.name

    def build(self, head_dim: int, mode: str, scale: Optional[float] = None, dropout: float = 0.0) -> Strategy:
        """One layer's strategy: ``num_heads`` heads of ``head_dim``, in ``mode``."""
        return self.strategy(self.num_heads, head_dim, self.memory_size, mode, shared=self.shared, scale=scale,
                             options=self.options, dropout=dropout, backend=self.backend)
