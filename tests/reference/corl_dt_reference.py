#!/usr/bin/python3
"""PyTorch reference outputs for the studio's import of CORL Decision Transformer checkpoints.

This script re-implements the ``TransformerBlock`` and ``DecisionTransformer`` modules of
CORL's single-file ``algorithms/offline/dt.py`` (https://github.com/tinkoff-ai/CORL) with
identical architecture and ``state_dict`` parameter names, builds two small models with
deterministic, perturbed weights, and writes fixtures (checkpoints, HDF5 inputs and the
expected action predictions) so that the C++ implementation can be tested against PyTorch
without Python in CI.

Usage:
    /usr/bin/python3 tests/reference/corl_dt_reference.py --out tests/data/corl_dt

Requires torch, numpy and h5py. See tests/data/corl_dt/README.md for the file list.
"""
import argparse
import os
from typing import Optional

import numpy as np
import torch
import torch.nn as nn

REWARD_SCALE = 0.001  # CORL TrainConfig.reward_scale
BATCH = 4
PAD = {1: 2, 3: 1}  # batch row -> number of right-padded steps
SEED = 2  # chosen so that no output is tanh-saturated (|x| > 0.99)


class TransformerBlock(nn.Module):
    """Pre-LayerNorm causal self-attention block, as in CORL dt.py."""

    def __init__(self, seq_len: int, embedding_dim: int, num_heads: int,
                 attention_dropout: float, residual_dropout: float):
        super().__init__()
        self.norm1 = nn.LayerNorm(embedding_dim)
        self.norm2 = nn.LayerNorm(embedding_dim)
        self.drop = nn.Dropout(residual_dropout)
        self.attention = nn.MultiheadAttention(
            embedding_dim, num_heads, attention_dropout, batch_first=True)
        self.mlp = nn.Sequential(
            nn.Linear(embedding_dim, 4 * embedding_dim),
            nn.GELU(),
            nn.Linear(4 * embedding_dim, embedding_dim),
            nn.Dropout(residual_dropout),
        )
        # True = position may not be attended to.
        self.register_buffer(
            "causal_mask", ~torch.tril(torch.ones(seq_len, seq_len)).to(bool))
        self.seq_len = seq_len

    def forward(self, x: torch.Tensor,
                padding_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        n = x.shape[1]
        h = self.norm1(x)
        attn = self.attention(query=h, key=h, value=h,
                              attn_mask=self.causal_mask[:n, :n],
                              key_padding_mask=padding_mask,
                              need_weights=False)[0]
        x = x + self.drop(attn)
        return x + self.mlp(self.norm2(x))


class DecisionTransformer(nn.Module):
    """Decision Transformer with CORL's token layout (R_0, s_0, a_0, R_1, ...)."""

    def __init__(self, state_dim: int, action_dim: int, seq_len: int = 10,
                 episode_len: int = 1000, embedding_dim: int = 128, num_layers: int = 4,
                 num_heads: int = 8, attention_dropout: float = 0.0,
                 residual_dropout: float = 0.0, embedding_dropout: float = 0.0,
                 max_action: float = 1.0):
        super().__init__()
        self.emb_drop = nn.Dropout(embedding_dropout)
        self.emb_norm = nn.LayerNorm(embedding_dim)
        self.out_norm = nn.LayerNorm(embedding_dim)
        # seq_len extra rows so that timesteps of padded steps stay in range
        self.timestep_emb = nn.Embedding(episode_len + seq_len, embedding_dim)
        self.state_emb = nn.Linear(state_dim, embedding_dim)
        self.action_emb = nn.Linear(action_dim, embedding_dim)
        self.return_emb = nn.Linear(1, embedding_dim)
        self.blocks = nn.ModuleList([
            TransformerBlock(3 * seq_len, embedding_dim, num_heads,
                             attention_dropout, residual_dropout)
            for _ in range(num_layers)
        ])
        self.action_head = nn.Sequential(nn.Linear(embedding_dim, action_dim), nn.Tanh())
        self.seq_len = seq_len
        self.embedding_dim = embedding_dim
        self.max_action = max_action
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module: nn.Module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.LayerNorm):
            nn.init.zeros_(module.bias)
            nn.init.ones_(module.weight)

    def forward(self, states, actions, returns_to_go, time_steps,
                padding_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        b, k = states.shape[0], states.shape[1]
        t = self.timestep_emb(time_steps)
        r = self.return_emb(returns_to_go.unsqueeze(-1)) + t
        s = self.state_emb(states) + t
        a = self.action_emb(actions) + t
        seq = torch.stack([r, s, a], dim=2).reshape(b, 3 * k, self.embedding_dim)
        if padding_mask is not None:
            padding_mask = torch.stack([padding_mask] * 3, dim=2).reshape(b, 3 * k)
        out = self.emb_drop(self.emb_norm(seq))
        for block in self.blocks:
            out = block(out, padding_mask=padding_mask)
        out = self.out_norm(out)
        return self.action_head(out[:, 1::3]) * self.max_action


def make_model(**cfg) -> DecisionTransformer:
    """CORL-initialised model, then every float parameter perturbed (non-trivial outputs)."""
    model = DecisionTransformer(**cfg, attention_dropout=0.1, residual_dropout=0.1,
                                embedding_dropout=0.1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape) * 0.3
            is_ln_weight = "norm" in name and name.endswith("weight")
            p.copy_(1.0 + noise if is_ln_weight else noise)
    return model.eval()


def make_inputs(rng, batch, k, state_dim, action_dim, episode_len, padded: dict):
    """Normalised windows as CORL's SequenceDataset yields them (right zero-padding)."""
    states = rng.standard_normal((batch, k, state_dim)).astype(np.float32)
    actions = rng.uniform(-1.0, 1.0, (batch, k, action_dim)).astype(np.float32)
    start_rtg = rng.uniform(1.5, 3.6, (batch, 1))
    rewards = rng.uniform(0.0, 0.012, (batch, k))  # scaled per-step rewards
    rtg = (start_rtg - np.cumsum(rewards, axis=1) + rewards).astype(np.float32)
    starts = rng.integers(0, episode_len - k + 1, batch)
    timesteps = (starts[:, None] + np.arange(k)[None, :]).astype(np.int64)
    mask = np.ones((batch, k), dtype=np.float32)
    for row, n in padded.items():
        mask[row, k - n:] = 0.0
        states[row, k - n:] = 0.0
        actions[row, k - n:] = 0.0
        rtg[row, k - n:] = 0.0
    return dict(states=states, actions=actions, returns_to_go=rtg,
                timesteps=timesteps, mask=mask)


@torch.no_grad()
def predict(model, inp, dtype=torch.float32) -> np.ndarray:
    model = model.to(dtype)
    mask = inp.get("mask")
    padding_mask = None if mask is None else ~torch.from_numpy(mask).to(torch.bool)
    rtg = inp["returns_to_go"].reshape(inp["states"].shape[:2])
    out = model(torch.from_numpy(inp["states"]).to(dtype),
                torch.from_numpy(inp["actions"]).to(dtype),
                torch.from_numpy(rtg).to(dtype),
                torch.from_numpy(inp["timesteps"]),
                padding_mask=padding_mask)
    model.float()
    return out.numpy()


def write_h5(path, data: dict):
    import h5py  # only to write fixtures; loading a model needs torch alone

    with h5py.File(path, "w") as f:
        for name, arr in data.items():
            f.create_dataset(name, data=arr, track_times=False)


def check_and_write(out_dir, tag, model, inp):
    y = predict(model, inp)
    y64 = predict(model, inp, torch.float64)
    diff = float(np.abs(y.astype(np.float64) - y64).max())
    sat = float((np.abs(y) > 0.99).mean())
    ok = np.isfinite(y).all() and sat < 0.2 and diff < 1e-5
    print(f"{tag}: shape {y.shape}, max|out| {np.abs(y).max():.6f}, "
          f"|out|>0.99 fraction {sat:.3f}, max|f32-f64| {diff:.2e} -> {'OK' if ok else 'FAIL'}")
    if not ok:
        raise SystemExit(f"check failed for {tag}")
    write_h5(os.path.join(out_dir, f"{tag}.h5"), {"actions": y.astype(np.float32)})
    return y


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="output directory")
    out = parser.parse_args().out
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(SEED)
    rng = np.random.default_rng(SEED)

    # Model A: plain state_dict.
    cfg_a = dict(state_dim=11, action_dim=3, seq_len=5, episode_len=40,
                 embedding_dim=16, num_layers=2, num_heads=2)
    model_a = make_model(**cfg_a)
    torch.save(model_a.state_dict(), os.path.join(out, "a_state_dict.pt"))
    inp_a = make_inputs(rng, BATCH, 5, 11, 3, 40, PAD)
    write_h5(os.path.join(out, "a_inputs.h5"), inp_a)
    check_and_write(out, "a_expected", model_a, inp_a)

    inp_nm = make_inputs(rng, 3, 3, 11, 3, 40, {})
    del inp_nm["mask"]
    inp_nm["returns_to_go"] = inp_nm["returns_to_go"][..., None]  # (B, K, 1)
    write_h5(os.path.join(out, "a_inputs_nomask.h5"), inp_nm)
    check_and_write(out, "a_expected_nomask", model_a, inp_nm)

    # Model B: CORL train() checkpoint dict with normalisation statistics.
    cfg_b = dict(state_dim=11, action_dim=3, seq_len=4, episode_len=30,
                 embedding_dim=24, num_layers=3, num_heads=1)
    model_b = make_model(**cfg_b)
    state_mean = rng.standard_normal((1, 11)).astype(np.float32)
    state_std = rng.uniform(0.5, 2.0, (1, 11)).astype(np.float32)
    torch.save({"model_state": model_b.state_dict(), "state_mean": state_mean,
                "state_std": state_std}, os.path.join(out, "b_checkpoint.pt"))
    inp_b = make_inputs(rng, BATCH, 4, 11, 3, 30, PAD)
    write_h5(os.path.join(out, "b_inputs.h5"), inp_b)
    y_b = check_and_write(out, "b_expected", model_b, inp_b)

    raw = dict(inp_b)
    raw["states"] = (inp_b["states"] * state_std + state_mean).astype(np.float32)
    raw["returns_to_go"] = (inp_b["returns_to_go"] / np.float32(REWARD_SCALE)).astype(np.float32)
    write_h5(os.path.join(out, "b_inputs_raw.h5"), raw)
    # What a C++ importer computes from the raw file: (s - mean) / std, rtg * scale.
    renorm = dict(raw, states=((raw["states"] - state_mean) / state_std).astype(np.float32),
                  returns_to_go=(raw["returns_to_go"] * np.float32(REWARD_SCALE)))
    diff = np.abs(predict(model_b, renorm) - y_b).max()
    print(f"b_inputs_raw re-normalised in float32 vs b_expected: max diff {diff:.2e}")


if __name__ == "__main__":
    main()
