"""CLIPTextModel's forward pass written out in plain torch ops, for training under CUDA-graph capture.

transformers' forward builds its causal mask through helper layers whose code paths depend on the device and
the library version; a CUDA graph must not contain a host synchronisation or a host-to-device copy, and the
training run gets one try on the GPU machine. This function computes the same last_hidden_state from the same
module parameters with a handful of ops that are known to be capturable: token + position embedding, per layer
pre-norm causal self-attention and a quick_gelu MLP, final layer norm (TokenSubset supplies the token
embeddings). check_matches() proves the equality on the caller's device before training relies on it.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


class TokenSubset:
    """The few vocabulary rows training uses. Captions are stored as indices into this subset ("local ids"), and
    their embeddings are a one-hot product with the gathered rows: its backward is an index_add into the full
    table, where nn.Embedding's backward sorts the ids (a path whose host synchronisation-freedom depends on the
    torch version)."""

    def __init__(self, used_token_ids, device):
        self.ids = torch.tensor(sorted(used_token_ids), dtype=torch.long, device=device)
        self.classes = torch.arange(self.ids.numel(), device=device)

    def local(self, input_ids: torch.Tensor) -> torch.Tensor:
        """Full-vocabulary ids -> subset indices (every id must be in the subset)."""
        local = torch.searchsorted(self.ids, input_ids)
        if not torch.equal(self.ids[local.clamp(max=self.ids.numel() - 1)], input_ids):
            raise ValueError("token ids outside the training subset")
        return local

    def embed(self, text_encoder, local_ids: torch.Tensor) -> torch.Tensor:
        """Token embeddings [B, S, width] in fp32 (autocast off, as nn.Embedding's lookup is exact)."""
        rows = text_encoder.embeddings.token_embedding.weight.index_select(0, self.ids)
        with torch.autocast(local_ids.device.type, enabled=False):
            one_hot = (local_ids.unsqueeze(-1) == self.classes).float()
            return one_hot @ rows.float()


def last_hidden_state(text_encoder, token_embeds: torch.Tensor) -> torch.Tensor:
    """Token embeddings [B, S, width] -> [B, S, width], as text_encoder(input_ids).last_hidden_state (no attention
    mask: Stable Diffusion pipelines pass none, padding is the end-of-text token, attention is causal)."""
    config = text_encoder.config
    if config.hidden_act != "quick_gelu":
        raise ValueError(f"text_forward supports hidden_act quick_gelu, the config has {config.hidden_act}")
    embeddings = text_encoder.embeddings
    batch, length, _ = token_embeds.shape
    x = token_embeds + embeddings.position_embedding.weight[:length].unsqueeze(0)
    heads = config.num_attention_heads
    for layer in text_encoder.encoder.layers:
        attn = layer.self_attn
        h = layer.layer_norm1(x)

        def split(t):
            return t.view(batch, length, heads, -1).transpose(1, 2)

        o = F.scaled_dot_product_attention(split(attn.q_proj(h)), split(attn.k_proj(h)), split(attn.v_proj(h)),
                                           is_causal=True)  # scale: head_dim ** -0.5, as CLIP's
        x = x + attn.out_proj(o.transpose(1, 2).reshape(batch, length, -1))
        h = layer.mlp.fc1(layer.layer_norm2(x))
        x = x + layer.mlp.fc2(h * torch.sigmoid(1.702 * h))
    return text_encoder.final_layer_norm(x)


def check_matches(text_encoder, subset: TokenSubset, input_ids: torch.Tensor, tolerance: float = 1e-3) -> float:
    """Largest absolute difference between this forward and transformers' own (fp32, TF32 off, no autocast);
    raises if it exceeds tolerance (a wrong formula differs by O(1), rounding by ~1e-6)."""
    tf32 = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        with torch.no_grad():
            ours = last_hidden_state(text_encoder, subset.embed(text_encoder, subset.local(input_ids))).float()
            theirs = text_encoder(input_ids).last_hidden_state.float()
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = tf32
    diff = float((ours - theirs).abs().max())
    if not diff <= tolerance:
        raise RuntimeError(f"text_forward differs from CLIPTextModel by {diff} (tolerance {tolerance})")
    return diff
