"""The transformers sequence-classification reward-model baseline, on a tiny model built here."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from mirage_bench.reward.data import load_pairs

FIX = Path(__file__).parent / "fixtures" / "reward"
CHAT_TEMPLATE = "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n<|end|>\n{% endfor %}"


@pytest.fixture(scope="module")
def tiny_rm(tmp_path_factory) -> Path:
    """A 2-layer randomly initialised Llama reward model and a word-level tokenizer, saved locally."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    texts = [
        p.query + " " + " ".join(p.memories) + p.response_memory + p.response_no_memory
        for p in load_pairs(FIX / "seed_003_appendix_b.jsonl")
        + load_pairs(FIX / "synthetic_pairs.jsonl")[:20]
    ]
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(
        texts + ["[User Query] [Relevant Memories] <|user|> <|assistant|> <|end|>"],
        trainers.WordLevelTrainer(special_tokens=["[PAD]", "[UNK]", "<s>", "</s>"]),
    )
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", bos_token="<s>", eos_token="</s>"
    )
    fast.chat_template = CHAT_TEMPLATE
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=len(fast),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        num_labels=1,
        pad_token_id=fast.pad_token_id,
    )
    model = transformers.LlamaForSequenceClassification(config)
    out = tmp_path_factory.mktemp("tiny_rm")
    model.save_pretrained(out)
    fast.save_pretrained(out)
    return out


def test_rm_formats_with_chat_template_and_memory_blocks(tiny_rm):
    from mirage_bench.reward.hf_rm import SequenceClassifierRewardModel

    rm = SequenceClassifierRewardModel.from_pretrained(tiny_rm)
    pair = load_pairs(FIX / "seed_003_appendix_b.jsonl")[0]
    with_mem = rm.format(pair.query, pair.memories, pair.response_memory)
    without = rm.format(pair.query, None, pair.response_memory)
    assert with_mem.startswith("<|user|>\n[User Query]\n" + pair.query) and "<|assistant|>" in with_mem
    assert "[Relevant Memories]\n1. Watch the Tom Holland Spiderman Trilogy" in with_mem
    assert "[Relevant Memories]" not in without


def test_rm_scores_are_deterministic_and_batch_independent(tiny_rm):
    from mirage_bench.reward.hf_rm import SequenceClassifierRewardModel

    pairs = load_pairs(FIX / "synthetic_pairs.jsonl")[:3]
    one = SequenceClassifierRewardModel.from_pretrained(tiny_rm, batch_size=1).score_pairs(pairs)
    four = SequenceClassifierRewardModel.from_pretrained(tiny_rm, batch_size=4).score_pairs(pairs)
    for a, b in zip(one, four, strict=True):
        assert a.method == "seq_rm_with_memory"
        assert a.p_memory == pytest.approx(b.p_memory, abs=1e-5)
        d = a.details
        assert a.p_memory == pytest.approx(1 / (1 + math.exp(-(d["reward_memory"] - d["reward_no_memory"]))))
    no_mem = SequenceClassifierRewardModel.from_pretrained(tiny_rm).score_pairs(pairs, with_memories=False)
    assert no_mem[0].method == "seq_rm_no_memory"
    assert no_mem[0].details["reward_memory"] != one[0].details["reward_memory"]


def test_rm_without_chat_template_is_refused(tiny_rm, tmp_path):
    import shutil

    from mirage_bench.reward.hf_rm import SequenceClassifierRewardModel

    broken = tmp_path / "rm"
    shutil.copytree(tiny_rm, broken)
    for name in ("chat_template.jinja", "tokenizer_config.json"):
        f = broken / name
        if f.exists() and name == "chat_template.jinja":
            f.unlink()
        elif f.exists():
            import json

            cfg = json.loads(f.read_text())
            cfg.pop("chat_template", None)
            f.write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="no chat template"):
        SequenceClassifierRewardModel.from_pretrained(broken)
