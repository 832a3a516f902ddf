"""Pretrained sequence-classification reward models through transformers (seed 003, Appendix D.2).

The paper scores each candidate with Skywork-Reward-V2 (e.g. ``Skywork/Skywork-Reward-V2-Llama-3.1-8B``):
the user turn holds the query and the retrieved memories under ``[User Query]`` and
``[Relevant Memories]`` (templates ``reward_rm_user_turn`` / ``reward_rm_user_turn_no_memory``),
the assistant turn holds the response, the tokenizer's chat template formats the conversation, and
the classification head's scalar is the reward. The higher-reward response is chosen; we report
``p_memory = sigmoid(r_memory - r_no_memory)``. ``torch`` and ``transformers`` are imported lazily.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mirage_bench.reward.data import PreferencePair, ScoreRecord
from mirage_bench.reward.llm import format_memories

WITH_MEMORY_TEMPLATE = "reward_rm_user_turn"
NO_MEMORY_TEMPLATE = "reward_rm_user_turn_no_memory"


def sigmoid(x: float) -> float:
    """Numerically safe logistic function.

    >>> sigmoid(0.0)
    0.5
    """
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


@dataclass
class SequenceClassifierRewardModel:
    """A scalar reward model: tokenizer with a chat template + ``AutoModelForSequenceClassification``."""

    tokenizer: Any
    model: Any
    name: str
    max_length: int = 4096
    batch_size: int = 4

    @classmethod
    def from_pretrained(
        cls,
        path_or_id: str | Path,
        *,
        device: str = "cpu",
        torch_dtype: str | None = None,
        max_length: int = 4096,
        batch_size: int = 4,
    ) -> SequenceClassifierRewardModel:
        """Load a checkpoint (local folder, or a Hub id when the Hub is reachable)."""
        try:
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
        except ImportError as exc:
            raise ImportError("reward-model baselines need the 'local' extra (torch, transformers)") from exc
        tokenizer = AutoTokenizer.from_pretrained(str(path_or_id))
        if getattr(tokenizer, "chat_template", None) is None:
            raise ValueError(
                f"{path_or_id}: the tokenizer has no chat template; the RM input cannot be formatted"
            )
        dtype = getattr(torch, torch_dtype) if torch_dtype else None
        kwargs: dict[str, Any] = {"num_labels": 1}
        if dtype is not None:
            kwargs["dtype"] = dtype
        model = AutoModelForSequenceClassification.from_pretrained(str(path_or_id), **kwargs)
        model.to(device)
        model.eval()
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        if model.config.pad_token_id is None:
            model.config.pad_token_id = tokenizer.pad_token_id
        return cls(tokenizer, model, str(path_or_id), max_length=max_length, batch_size=batch_size)

    def format(self, query: str, memories: Sequence[str] | None, response: str) -> str:
        """The chat-templated text of one (query, memories, response) conversation."""
        from mirage_bench.prompts import render

        if memories is None:
            user = render(NO_MEMORY_TEMPLATE, query=query).text
        else:
            user = render(WITH_MEMORY_TEMPLATE, query=query, memories=format_memories(list(memories))).text
        conv = [{"role": "user", "content": user}, {"role": "assistant", "content": response}]
        return self.tokenizer.apply_chat_template(conv, tokenize=False)

    def rewards(self, texts: Sequence[str]) -> list[float]:
        """Scalar rewards of already formatted conversations."""
        import torch

        out: list[float] = []
        device = next(self.model.parameters()).device
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            enc = self.tokenizer(
                batch,
                return_tensors="pt",
                padding=True,
                truncation=True,
                max_length=self.max_length,
                add_special_tokens=False,
            )
            enc = {k: v.to(device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}
            with torch.no_grad():
                logits = self.model(**enc).logits
            out += [float(v) for v in logits[:, 0].float().cpu()]
        return out

    def score_pairs(
        self, pairs: Sequence[PreferencePair], *, with_memories: bool = True
    ) -> list[ScoreRecord]:
        """Score both responses of each pair with the same context; ``p_memory = sigmoid(r_m - r_0)``."""
        method = "seq_rm_with_memory" if with_memories else "seq_rm_no_memory"
        texts: list[str] = []
        for p in pairs:
            mems = p.memories if with_memories else None
            texts += [
                self.format(p.query, mems, p.response_memory),
                self.format(p.query, mems, p.response_no_memory),
            ]
        r = self.rewards(texts)
        return [
            ScoreRecord(
                pair_id=p.pair_id,
                method=method,
                p_memory=sigmoid(r[2 * i] - r[2 * i + 1]),
                details={"reward_memory": r[2 * i], "reward_no_memory": r[2 * i + 1], "model": self.name},
            )
            for i, p in enumerate(pairs)
        ]
