"""Sentence-transformers models with random weights of a named shape, made offline with transformers: what the
embedding benchmark (benchmarks/bench_embed.py) and the tests embed with where no real model may be downloaded.
Only times (and the plumbing) mean anything with such a model; its vectors rank nothing.

The tokenizer is a BERT WordPiece vocabulary written here (the special tokens, printable ASCII and the CJK unified
ideographs, about the 21,128 entries of m3e-small's), so nothing is read from a model hub or another package.
"""

from __future__ import annotations

from pathlib import Path

# transformers BertConfig fields of each shape: m3e-small's (uer/chinese_roberta_L-4_H-512) and BERT-base's
SHAPES = {
    "tiny": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64),
    "m3e-small": dict(hidden_size=512, num_hidden_layers=4, num_attention_heads=8, intermediate_size=2048),
    "bert-base": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072),
}
_SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def vocabulary() -> list[str]:
    ascii_tokens = [chr(c) for c in range(33, 127)]
    pieces = [f"##{c}" for c in ascii_tokens if c.isalnum()]
    ideographs = [chr(c) for c in range(0x4E00, 0x9FA6)]
    return _SPECIAL + ascii_tokens + pieces + ideographs + ["，", "。", "：", "；", "？", "！", "、", "（", "）"]


def make_random_model(folder, shape: str = "tiny", seed: int = 0, max_seq_length: int = 512) -> Path:
    """A sentence-transformers folder (BERT of `shape`, mean pooling) with weights drawn from `seed`; made once per
    folder (a folder that already holds one is returned as it is)."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r} (known: {', '.join(SHAPES)})")
    folder = Path(folder)
    if (folder / "modules.json").is_file():
        return folder
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    words = vocabulary()
    base = folder / "transformer"
    base.mkdir(parents=True, exist_ok=True)
    (base / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    BertTokenizerFast(vocab_file=str(base / "vocab.txt"), do_lower_case=False).save_pretrained(base)
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(words), max_position_embeddings=max_seq_length, **SHAPES[shape])
    BertModel(config).eval().save_pretrained(base)
    try:  # sentence-transformers 6 moved the modules; 3 to 5 keep them in .models
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    except ImportError:
        from sentence_transformers.models import Pooling, Transformer
    encoder = Transformer(str(base), max_seq_length=max_seq_length)
    width = getattr(encoder, "get_embedding_dimension", None) or encoder.get_word_embedding_dimension  # renamed in 5
    pooling = Pooling(width(), "mean")
    SentenceTransformer(modules=[encoder, pooling], device="cpu").save(str(folder))
    return folder
