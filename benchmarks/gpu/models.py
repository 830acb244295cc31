"""The models issue 30's gpu-memory-estimate is validated against, each with a fixed batch.

Five models, as the issue's acceptance names them: an MLP, a CNN, a transformer with and
without activation checkpointing, and a model with buffers and tied weights. Each entry of
MODELS is (build, batch, loss): build() returns the module on the current default device
(callers wrap it in `with torch.device(dev):`), batch(device) the inputs and targets, and
loss(model, inputs, targets) the scalar loss. The shapes are fixed, so that a recorded peak
(tests/data/gpu/memory_*.json) stays comparable with the estimate of the same case; they are
small enough that the 60 training steps of record_memory.py run in about a minute on a shared
CPU and in seconds on a GPU. Changing a shape or a layer means recording the facts again.
"""
from __future__ import annotations

import math
from typing import Callable, Dict, Tuple

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

VOCAB = 8192


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1024, 2048), nn.GELU(), nn.Linear(2048, 2048),
                                 nn.GELU(), nn.Linear(2048, 1024), nn.GELU(),
                                 nn.Linear(1024, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class CNN(nn.Module):
    """Plain convolutions (no batch norm: buffers are BuffersTied's subject)."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
            nn.Conv2d(32, 64, 3, padding=1, stride=2), nn.ReLU(),
            nn.Conv2d(64, 128, 3, padding=1, stride=2), nn.ReLU(),
            nn.Conv2d(128, 128, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(128, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).flatten(1))


class Transformer(nn.Module):
    """A small decoder-free LM: token and learned position embeddings, 4 encoder layers
    (batch_first, dropout 0, so the run is deterministic), an untied head. With
    `checkpointed`, each layer's activations are recomputed in backward
    (torch.utils.checkpoint, use_reentrant=False: the form torch recommends)."""

    def __init__(self, checkpointed: bool = False, d: int = 256, layers: int = 4,
                 seq: int = 256) -> None:
        super().__init__()
        self.checkpointed = checkpointed
        self.tok = nn.Embedding(VOCAB, d)
        self.pos = nn.Parameter(torch.zeros(seq, d))
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d, nhead=4, dim_feedforward=4 * d, dropout=0.0,
                                       batch_first=True) for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, VOCAB)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.tok(tokens) + self.pos[: tokens.shape[1]]
        for layer in self.layers:
            x = checkpoint(layer, x, use_reentrant=False) if self.checkpointed else layer(x)
        return self.head(self.norm(x))


class BuffersTied(nn.Module):
    """Tied input/output embeddings (one Parameter, counted once), batch norm's running
    statistics (buffers, not trained), a persistent sinusoidal table and a
    non-persistent causal-free mask buffer (in memory, not in the state dict)."""

    def __init__(self, d: int = 256, seq: int = 128) -> None:
        super().__init__()
        self.emb = nn.Embedding(VOCAB, d)
        pos = torch.arange(seq, dtype=torch.float32)[:, None]
        freq = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(1e4) / d))
        table = torch.zeros(seq, d)
        table[:, 0::2], table[:, 1::2] = torch.sin(pos * freq), torch.cos(pos * freq)
        self.register_buffer("pos", table)
        self.register_buffer("scale", torch.ones(seq, d), persistent=False)
        self.block = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.bn = nn.BatchNorm1d(d)
        self.out = nn.Linear(d, VOCAB, bias=False)
        self.out.weight = self.emb.weight   # tied

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.emb(tokens) + self.pos[: tokens.shape[1]] * self.scale[: tokens.shape[1]]
        x = x + self.block(x)
        x = self.bn(x.transpose(1, 2)).transpose(1, 2)
        return self.out(x)


def _classify(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(model(x).float(), y)


def _lm(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(model(x).float().flatten(0, 1), y.flatten())


def _gen(device: torch.device) -> torch.Generator:
    return torch.Generator(device=device).manual_seed(1234)


Batch = Tuple[torch.Tensor, torch.Tensor]

# name: (build, batch(device), loss, batch shapes as recorded)
MODELS: Dict[str, Tuple[Callable[[], nn.Module], Callable[[torch.device], Batch],
                        Callable[..., torch.Tensor], dict]] = {
    "mlp": (MLP, lambda d: (torch.randn(128, 1024, device=d, generator=_gen(d)),
                            torch.randint(0, 10, (128,), device=d, generator=_gen(d))),
            _classify, {"x": [128, 1024], "y": [128]}),
    "cnn": (CNN, lambda d: (torch.randn(32, 3, 64, 64, device=d, generator=_gen(d)),
                            torch.randint(0, 10, (32,), device=d, generator=_gen(d))),
            _classify, {"x": [32, 3, 64, 64], "y": [32]}),
    "transformer": (Transformer,
                    lambda d: (torch.randint(0, VOCAB, (8, 256), device=d, generator=_gen(d)),
                               torch.randint(0, VOCAB, (8, 256), device=d, generator=_gen(d))),
                    _lm, {"tokens": [8, 256], "targets": [8, 256]}),
    "transformer_ckpt": (lambda: Transformer(checkpointed=True),
                         lambda d: (torch.randint(0, VOCAB, (8, 256), device=d,
                                                  generator=_gen(d)),
                                    torch.randint(0, VOCAB, (8, 256), device=d,
                                                  generator=_gen(d))),
                         _lm, {"tokens": [8, 256], "targets": [8, 256]}),
    "buffers_tied": (BuffersTied,
                     lambda d: (torch.randint(0, VOCAB, (16, 128), device=d, generator=_gen(d)),
                                torch.randint(0, VOCAB, (16, 128), device=d,
                                              generator=_gen(d))),
                     _lm, {"tokens": [16, 128], "targets": [16, 128]}),
}
