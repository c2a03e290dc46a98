"""The BERT-style encoders train builds on every framework: their sizes (one config, which
each framework's models build) and their analytic FLOP count."""

from __future__ import annotations

from dataclasses import dataclass

from siliconbench.core.params import ParamError


@dataclass(frozen=True)
class EncoderConfig:
    """A BERT-style encoder's size: the default configs of transformers' DistilBertConfig
    and the BERT-Large BertConfig that the torch models' transformer_task builds."""
    layers: int
    hidden: int
    heads: int
    ffn: int
    vocab: int = 30522
    max_positions: int = 512


ENCODERS = {"distilbert": EncoderConfig(6, 768, 12, 3072),
            "bert-large": EncoderConfig(24, 1024, 16, 4096)}


def encoder_config(name: str, layers: int | None, seq_len: int) -> EncoderConfig:
    """The model's config, with --layers applied; ParamError for what it cannot take."""
    if name not in ENCODERS:
        raise ParamError(f"Unknown transformer {name!r}; choose distilbert or bert-large.")
    config = ENCODERS[name]
    if seq_len > config.max_positions:
        raise ParamError(f"--seq-len must be at most {config.max_positions} for {name}, "
                         f"not {seq_len}.")
    return EncoderConfig(layers or config.layers, config.hidden, config.heads, config.ffn,
                         config.vocab, config.max_positions)


def encoder_train_flops(config: EncoderConfig, batch_size: int, seq_len: int) -> float:
    """FLOPs of one training step of the encoder layers, counted as torch's FLOP counter counts
    them (matmuls only): per layer, Q, K, V and output projections 8·T·h², the feed-forward
    4·T·h·f, attention scores and context 4·B·L²·h, with T = B·L tokens; backward twice the
    forward. Embeddings and the classifier head are left out (a fraction of a percent)."""
    tokens = batch_size * seq_len
    h, f = config.hidden, config.ffn
    forward = config.layers * (8 * tokens * h * h + 4 * tokens * h * f
                               + 4 * batch_size * seq_len * seq_len * h)
    return 3.0 * forward
