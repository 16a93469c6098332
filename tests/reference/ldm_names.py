"""Weight names of the original Stable Diffusion single-file checkpoints (CompVis/LDM, OpenCLIP) and diffusers.

`to_ldm(...)` renames the state dicts of a diffusers folder (UNet2DConditionModel, AutoencoderKL, CLIPTextModel)
into one single-file checkpoint as the original repositories saved it; `from_ldm(...)` parses such names back.
The two directions are written independently (a rename table one way, a parser the other way), so a round trip
that reproduces every tensor is a real check of both. The mapping itself follows what diffusers'
`loaders/single_file_utils.py` reads; docs/reference-fixtures.md describes it in prose.

Tensors may be torch tensors or numpy arrays; only reshape/concatenate/split/transpose are used.
"""
import re

UNET_PREFIX = "model.diffusion_model."
VAE_PREFIX = "first_stage_model."
CLIP_PREFIX = "cond_stage_model.transformer."  # SD 1.x: Hugging Face CLIPTextModel names follow
OPENCLIP_PREFIX = "cond_stage_model.model."  # SD 2.x: OpenCLIP names follow
SDXL_CLIP_PREFIX = "conditioner.embedders.0.transformer."  # SDXL: CLIP ViT-L, Hugging Face names follow
SDXL_OPENCLIP_PREFIX = "conditioner.embedders.1.model."  # SDXL: OpenCLIP bigG names follow

# ---------------------------------------------------------------------------------------------------------------
# small tensor helpers (torch or numpy)


def _is_torch(t):
    return type(t).__module__.startswith("torch")


def _cat0(parts):
    if _is_torch(parts[0]):
        import torch
        return torch.cat(list(parts), dim=0)
    import numpy as np
    return np.concatenate(list(parts), axis=0)


def _transpose2d(t):
    return t.T.contiguous() if _is_torch(t) else t.T.copy()


def _as_1x1_conv(t):
    return t.reshape(tuple(t.shape) + (1, 1))


def _as_linear(t):
    if len(t.shape) != 4 or tuple(t.shape[2:]) != (1, 1):
        raise ValueError(f"expected a 1x1 convolution weight, got shape {tuple(t.shape)}")
    return t.reshape(tuple(t.shape[:2]))


# ---------------------------------------------------------------------------------------------------------------
# UNet

# diffusers ResnetBlock2D module -> LDM ResBlock module
_UNET_RESNET = {
    "norm1": "in_layers.0",
    "conv1": "in_layers.2",
    "time_emb_proj": "emb_layers.1",
    "norm2": "out_layers.0",
    "conv2": "out_layers.3",
    "conv_shortcut": "skip_connection",
}
_UNET_RESNET_BACK = {v: k for k, v in _UNET_RESNET.items()}

_UNET_TOP = {
    "time_embedding.linear_1": "time_embed.0",
    "time_embedding.linear_2": "time_embed.2",
    "add_embedding.linear_1": "label_emb.0.0",  # SDXL's text_time added conditioning
    "add_embedding.linear_2": "label_emb.0.2",
    "conv_in": "input_blocks.0.0",
    "conv_norm_out": "out.0",
    "conv_out": "out.2",
}
_UNET_TOP_BACK = {v: k for k, v in _UNET_TOP.items()}


def _unet_resnet_rest(rest):
    module, _, param = rest.partition(".")
    if module not in _UNET_RESNET:
        raise KeyError(f"unknown UNet resnet parameter '{rest}'")
    return f"{_UNET_RESNET[module]}.{param}"


def unet_name_to_ldm(name, layers_per_block, up_block_types):
    """One diffusers UNet2DConditionModel parameter name -> its LDM name (without the prefix)."""
    L = layers_per_block
    for d, l in _UNET_TOP.items():
        if name.startswith(d + "."):
            return l + name[len(d):]
    m = re.fullmatch(r"down_blocks\.(\d+)\.(resnets|attentions|downsamplers)\.(\d+)\.(.+)", name)
    if m:
        b, kind, j, rest = int(m[1]), m[2], int(m[3]), m[4]
        if kind == "resnets":
            return f"input_blocks.{1 + b * (L + 1) + j}.0.{_unet_resnet_rest(rest)}"
        if kind == "attentions":
            return f"input_blocks.{1 + b * (L + 1) + j}.1.{rest}"
        if not rest.startswith("conv."):
            raise KeyError(f"unknown UNet downsampler parameter '{name}'")
        return f"input_blocks.{1 + b * (L + 1) + L}.0.op.{rest[len('conv.'):]}"
    m = re.fullmatch(r"mid_block\.(resnets|attentions)\.(\d+)\.(.+)", name)
    if m:
        kind, j, rest = m[1], int(m[2]), m[3]
        if kind == "resnets":
            return f"middle_block.{0 if j == 0 else 2}.{_unet_resnet_rest(rest)}"
        return f"middle_block.1.{rest}"
    m = re.fullmatch(r"up_blocks\.(\d+)\.(resnets|attentions|upsamplers)\.(\d+)\.(.+)", name)
    if m:
        b, kind, j, rest = int(m[1]), m[2], int(m[3]), m[4]
        if kind == "resnets":
            return f"output_blocks.{b * (L + 1) + j}.0.{_unet_resnet_rest(rest)}"
        if kind == "attentions":
            return f"output_blocks.{b * (L + 1) + j}.1.{rest}"
        # the upsampler follows the last layer's resnet, and its attention if the block has one
        slot = 2 if up_block_types[b].startswith("CrossAttn") else 1
        return f"output_blocks.{b * (L + 1) + L}.{slot}.{rest}"
    raise KeyError(f"no LDM name for UNet parameter '{name}'")


def unet_name_from_ldm(name, layers_per_block):
    """One LDM UNet name (without the prefix) -> the diffusers name. Parsed, not looked up in the table above."""
    L = layers_per_block
    for l, d in _UNET_TOP_BACK.items():
        if name.startswith(l + "."):
            return d + name[len(l):]
    m = re.fullmatch(r"input_blocks\.(\d+)\.(\d+)\.(.+)", name)
    if m:
        i, slot, rest = int(m[1]), int(m[2]), m[3]
        b, j = divmod(i - 1, L + 1)
        if j == L:  # the block's downsampler
            if slot != 0 or not rest.startswith("op."):
                raise KeyError(f"unexpected LDM UNet name '{name}'")
            return f"down_blocks.{b}.downsamplers.0.conv.{rest[len('op.'):]}"
        if slot == 0:
            return f"down_blocks.{b}.resnets.{j}.{_ldm_resnet_rest(rest, name)}"
        if slot == 1:
            return f"down_blocks.{b}.attentions.{j}.{rest}"
    m = re.fullmatch(r"middle_block\.(\d+)\.(.+)", name)
    if m:
        slot, rest = int(m[1]), m[2]
        if slot == 1:
            return f"mid_block.attentions.0.{rest}"
        if slot in (0, 2):
            return f"mid_block.resnets.{slot // 2}.{_ldm_resnet_rest(rest, name)}"
    m = re.fullmatch(r"output_blocks\.(\d+)\.(\d+)\.(.+)", name)
    if m:
        i, slot, rest = int(m[1]), int(m[2]), m[3]
        b, j = divmod(i, L + 1)
        if slot == 0:
            return f"up_blocks.{b}.resnets.{j}.{_ldm_resnet_rest(rest, name)}"
        if rest.startswith("conv."):  # Upsample at slot 1 (no attention) or 2 (after the attention)
            return f"up_blocks.{b}.upsamplers.0.{rest}"
        if slot == 1:
            return f"up_blocks.{b}.attentions.{j}.{rest}"
    raise KeyError(f"no diffusers name for LDM UNet parameter '{name}'")


def _ldm_resnet_rest(rest, full):
    parts = rest.split(".")
    if parts[0] == "skip_connection":
        module, param = parts[0], ".".join(parts[1:])
    else:
        module, param = ".".join(parts[:2]), ".".join(parts[2:])
    if module not in _UNET_RESNET_BACK:
        raise KeyError(f"unknown LDM resnet parameter '{full}'")
    return f"{_UNET_RESNET_BACK[module]}.{param}"


# ---------------------------------------------------------------------------------------------------------------
# VAE (AutoencoderKL)

_VAE_ATTN = {"group_norm": "norm", "to_q": "q", "to_k": "k", "to_v": "v", "to_out.0": "proj_out"}
_VAE_ATTN_BACK = {v: k for k, v in _VAE_ATTN.items()}


def _vae_resnet_rest(rest):
    return rest.replace("conv_shortcut.", "nin_shortcut.")


def vae_name_to_ldm(name, num_up_blocks):
    """One diffusers AutoencoderKL parameter name -> (LDM name without prefix, is_attention_projection)."""
    m = re.fullmatch(r"(encoder|decoder)\.(.+)", name)
    if not m:
        if re.fullmatch(r"(post_)?quant_conv\.(weight|bias)", name):
            return name, False
        raise KeyError(f"no LDM name for VAE parameter '{name}'")
    part, rest = m[1], m[2]
    if rest.startswith("conv_norm_out."):
        return f"{part}.norm_out.{rest[len('conv_norm_out.'):]}", False
    if re.fullmatch(r"conv_(in|out)\.(weight|bias)", rest):
        return name, False
    m = re.fullmatch(r"mid_block\.resnets\.(\d+)\.(.+)", rest)
    if m:
        return f"{part}.mid.block_{int(m[1]) + 1}.{_vae_resnet_rest(m[2])}", False
    m = re.fullmatch(r"mid_block\.attentions\.0\.(.+)\.(weight|bias)", rest)
    if m:
        if m[1] not in _VAE_ATTN:
            raise KeyError(f"unknown VAE attention parameter '{name}'")
        return f"{part}.mid.attn_1.{_VAE_ATTN[m[1]]}.{m[2]}", m[1] != "group_norm" and m[2] == "weight"
    m = re.fullmatch(r"down_blocks\.(\d+)\.resnets\.(\d+)\.(.+)", rest)
    if m and part == "encoder":
        return f"encoder.down.{m[1]}.block.{m[2]}.{_vae_resnet_rest(m[3])}", False
    m = re.fullmatch(r"down_blocks\.(\d+)\.downsamplers\.0\.conv\.(.+)", rest)
    if m and part == "encoder":
        return f"encoder.down.{m[1]}.downsample.conv.{m[2]}", False
    # the decoder's up blocks are numbered from the lowest resolution in diffusers, from the highest in LDM
    m = re.fullmatch(r"up_blocks\.(\d+)\.resnets\.(\d+)\.(.+)", rest)
    if m and part == "decoder":
        return f"decoder.up.{num_up_blocks - 1 - int(m[1])}.block.{m[2]}.{_vae_resnet_rest(m[3])}", False
    m = re.fullmatch(r"up_blocks\.(\d+)\.upsamplers\.0\.conv\.(.+)", rest)
    if m and part == "decoder":
        return f"decoder.up.{num_up_blocks - 1 - int(m[1])}.upsample.conv.{m[2]}", False
    raise KeyError(f"no LDM name for VAE parameter '{name}'")


def vae_name_from_ldm(name, num_up_blocks):
    """One LDM VAE name (without prefix) -> (diffusers name, is_attention_projection)."""
    if re.fullmatch(r"(post_)?quant_conv\.(weight|bias)", name):
        return name, False
    m = re.fullmatch(r"(encoder|decoder)\.(.+)", name)
    if not m:
        raise KeyError(f"no diffusers name for LDM VAE parameter '{name}'")
    part, rest = m[1], m[2]
    if rest.startswith("norm_out."):
        return f"{part}.conv_norm_out.{rest[len('norm_out.'):]}", False
    if re.fullmatch(r"conv_(in|out)\.(weight|bias)", rest):
        return name, False
    m = re.fullmatch(r"mid\.block_(\d+)\.(.+)", rest)
    if m:
        return f"{part}.mid_block.resnets.{int(m[1]) - 1}.{m[2].replace('nin_shortcut.', 'conv_shortcut.')}", False
    m = re.fullmatch(r"mid\.attn_1\.(norm|q|k|v|proj_out)\.(weight|bias)", rest)
    if m:
        return (f"{part}.mid_block.attentions.0.{_VAE_ATTN_BACK[m[1]]}.{m[2]}",
                m[1] != "norm" and m[2] == "weight")
    m = re.fullmatch(r"down\.(\d+)\.block\.(\d+)\.(.+)", rest)
    if m and part == "encoder":
        return f"encoder.down_blocks.{m[1]}.resnets.{m[2]}.{m[3].replace('nin_shortcut.', 'conv_shortcut.')}", False
    m = re.fullmatch(r"down\.(\d+)\.downsample\.conv\.(.+)", rest)
    if m and part == "encoder":
        return f"encoder.down_blocks.{m[1]}.downsamplers.0.conv.{m[2]}", False
    m = re.fullmatch(r"up\.(\d+)\.block\.(\d+)\.(.+)", rest)
    if m and part == "decoder":
        i = num_up_blocks - 1 - int(m[1])
        return f"decoder.up_blocks.{i}.resnets.{m[2]}.{m[3].replace('nin_shortcut.', 'conv_shortcut.')}", False
    m = re.fullmatch(r"up\.(\d+)\.upsample\.conv\.(.+)", rest)
    if m and part == "decoder":
        return f"decoder.up_blocks.{num_up_blocks - 1 - int(m[1])}.upsamplers.0.conv.{m[2]}", False
    raise KeyError(f"no diffusers name for LDM VAE parameter '{name}'")


# ---------------------------------------------------------------------------------------------------------------
# Text encoders


def clip_key(name):
    """Hugging Face CLIPTextModel names as saved on disk start with 'text_model.'; transformers 5 keeps the module
    flat in memory, so its state_dict() lacks that prefix. Normalizes either spelling to the on-disk one."""
    return name if name.startswith("text_model.") else "text_model." + name


_OPENCLIP_TOP = {
    "text_model.embeddings.token_embedding.weight": "token_embedding.weight",
    "text_model.embeddings.position_embedding.weight": "positional_embedding",
    "text_model.final_layer_norm.weight": "ln_final.weight",
    "text_model.final_layer_norm.bias": "ln_final.bias",
}
_OPENCLIP_LAYER = {
    "layer_norm1": "ln_1",
    "layer_norm2": "ln_2",
    "self_attn.out_proj": "attn.out_proj",
    "mlp.fc1": "mlp.c_fc",
    "mlp.fc2": "mlp.c_proj",
}


def openclip_from_clip(sd):
    """diffusers/HF CLIPTextModel state dict (names with 'text_model.') -> OpenCLIP names (without prefix).
    q/k/v projections are fused into in_proj_weight/in_proj_bias in q, k, v order."""
    out = {}
    layers = {}
    for name, t in sd.items():
        if name in _OPENCLIP_TOP:
            out[_OPENCLIP_TOP[name]] = t
            continue
        m = re.fullmatch(r"text_model\.encoder\.layers\.(\d+)\.(.+)\.(weight|bias)", name)
        if not m:
            raise KeyError(f"no OpenCLIP name for text encoder parameter '{name}'")
        i, module, param = int(m[1]), m[2], m[3]
        if module in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"):
            layers.setdefault((i, param), {})[module[len("self_attn."):][0]] = t
        elif module in _OPENCLIP_LAYER:
            out[f"transformer.resblocks.{i}.{_OPENCLIP_LAYER[module]}.{param}"] = t
        else:
            raise KeyError(f"no OpenCLIP name for text encoder parameter '{name}'")
    for (i, param), qkv in layers.items():
        if set(qkv) != {"q", "k", "v"}:
            raise KeyError(f"layer {i} lacks one of q/k/v_proj.{param}")
        out[f"transformer.resblocks.{i}.attn.in_proj_{param}"] = _cat0([qkv["q"], qkv["k"], qkv["v"]])
    return out


def clip_from_openclip(sd, num_layers):
    """OpenCLIP names (without prefix) -> HF CLIPTextModel names, keeping only the first num_layers resblocks
    (SD 2.x uses the penultimate layer's output). Returns (state dict, names not used)."""
    out, unused = {}, []
    top_back = {v: k for k, v in _OPENCLIP_TOP.items()}
    layer_back = {v: k for k, v in _OPENCLIP_LAYER.items()}
    for name, t in sd.items():
        if name in top_back:
            out[top_back[name]] = t
            continue
        m = re.fullmatch(r"transformer\.resblocks\.(\d+)\.(.+)\.(weight|bias)", name)
        m2 = re.fullmatch(r"transformer\.resblocks\.(\d+)\.attn\.in_proj_(weight|bias)", name)
        if m2:
            i, param = int(m2[1]), m2[2]
            if i >= num_layers:
                unused.append(name)
                continue
            width = t.shape[0] // 3
            for k, part in enumerate("qkv"):
                out[f"text_model.encoder.layers.{i}.self_attn.{part}_proj.{param}"] = t[k * width:(k + 1) * width]
        elif m and m[2] in layer_back:
            if int(m[1]) >= num_layers:
                unused.append(name)
                continue
            out[f"text_model.encoder.layers.{m[1]}.{layer_back[m[2]]}.{m[3]}"] = t
        else:
            unused.append(name)  # text_projection, logit_scale, ...
    return out, unused


# ---------------------------------------------------------------------------------------------------------------
# Whole checkpoints


def to_ldm(unet_sd, unet_config, vae_sd, vae_config, text_sd, text_kind, openclip_extra=None, extra=None):
    """Builds one LDM single-file state dict.

    unet_config/vae_config: the diffusers configs (layers_per_block, up_block_types; up_block_types of the VAE).
    text_kind: "clip" (SD 1.x: cond_stage_model.transformer.<HF names>) or "openclip" (SD 2.x).
    openclip_extra: OpenCLIP-named tensors (without prefix) to add for "openclip", e.g. the extra resblock and
    text_projection that SD 2.x checkpoints hold but diffusers' text encoder does not use.
    extra: fully named tensors to add as they are (e.g. 'alphas_cumprod').
    """
    out = {}

    def put(name, t):
        if name in out:
            raise KeyError(f"two tensors map to '{name}'")
        out[name] = t

    L = unet_config["layers_per_block"]
    if not isinstance(L, int):
        raise ValueError("only an integer layers_per_block is supported")
    for name, t in unet_sd.items():
        put(UNET_PREFIX + unet_name_to_ldm(name, L, list(unet_config["up_block_types"])), t)
    n_up = len(vae_config["up_block_types"])
    for name, t in vae_sd.items():
        ldm, is_proj = vae_name_to_ldm(name, n_up)
        put(VAE_PREFIX + ldm, _as_1x1_conv(t) if is_proj else t)
    text_sd = {clip_key(k): v for k, v in text_sd.items()}
    if text_kind == "clip":
        for name, t in text_sd.items():
            put(CLIP_PREFIX + name, t)
    elif text_kind == "openclip":
        for name, t in openclip_from_clip(text_sd).items():
            put(OPENCLIP_PREFIX + name, t)
        for name, t in (openclip_extra or {}).items():
            put(OPENCLIP_PREFIX + name, t)
    else:
        raise ValueError(f"unknown text encoder kind '{text_kind}'")
    for name, t in (extra or {}).items():
        put(name, t)
    return out


def to_ldm_sdxl(unet_sd, unet_config, vae_sd, vae_config, text_sd, text_2_sd, extra=None):
    """An SDXL single file: the UNet and VAE as to_ldm; text_encoder (CLIPTextModel) under SDXL_CLIP_PREFIX with
    its Hugging Face names; text_encoder_2 (CLIPTextModelWithProjection) under SDXL_OPENCLIP_PREFIX with OpenCLIP
    names, its text_projection.weight ([proj, width]) stored as OpenCLIP's text_projection ([width, proj])."""
    out = to_ldm(unet_sd, unet_config, vae_sd, vae_config, {}, "clip", extra=extra)

    def put(name, t):
        if name in out:
            raise KeyError(f"two tensors map to '{name}'")
        out[name] = t

    for name, t in text_sd.items():
        put(SDXL_CLIP_PREFIX + clip_key(name), t)
    text_2_sd = {clip_key(k) if not k.startswith("text_projection.") else k: v for k, v in text_2_sd.items()}
    projection = text_2_sd.pop("text_projection.weight")
    for name, t in openclip_from_clip(text_2_sd).items():
        put(SDXL_OPENCLIP_PREFIX + name, t)
    put(SDXL_OPENCLIP_PREFIX + "text_projection", _transpose2d(projection))
    return out


def from_ldm(ldm, unet_layers_per_block, vae_num_up_blocks, text_kind, text_num_layers):
    """Splits an LDM single-file state dict into diffusers-named (unet, vae, text_encoder) dicts and a list of
    names that belong to none of them. Text encoder names carry the 'text_model.' prefix."""
    unet, vae, text, unused = {}, {}, {}, []
    openclip = {}
    for name, t in ldm.items():
        if name.startswith(UNET_PREFIX):
            unet[unet_name_from_ldm(name[len(UNET_PREFIX):], unet_layers_per_block)] = t
        elif name.startswith(VAE_PREFIX):
            d, is_proj = vae_name_from_ldm(name[len(VAE_PREFIX):], vae_num_up_blocks)
            vae[d] = _as_linear(t) if is_proj else t
        elif text_kind == "clip" and name.startswith(CLIP_PREFIX):
            rest = name[len(CLIP_PREFIX):]
            if rest.endswith("position_ids"):
                unused.append(name)  # an index buffer, not a weight
            else:
                text[rest] = t
        elif text_kind == "openclip" and name.startswith(OPENCLIP_PREFIX):
            openclip[name[len(OPENCLIP_PREFIX):]] = t
        else:
            unused.append(name)
    if text_kind == "openclip":
        text, more = clip_from_openclip(openclip, text_num_layers)
        unused += [OPENCLIP_PREFIX + n for n in more]
    return unet, vae, text, unused


def openclip_text_projection_to_hf(t):
    """OpenCLIP's text_projection is applied as x @ P ([width, embed]); HF's Linear weight is P transposed."""
    return _transpose2d(t)


# ---------------------------------------------------------------------------------------------------------------
# SDXL single files as a map from the diffusers folder (what the C++ tests use to write the file themselves)


def sdxl_ldm_map(unet_sd, unet_config, vae_sd, vae_config, text_sd, text_2_sd):
    """The tensors of to_ldm_sdxl(...) as recipes over the folder's tensors: a list of
    {"key": LDM name, "op": "copy" | "cat0" | "transpose" | "conv1x1", "sources": [[component, name], ...]} with
    component one of unet, vae, text_encoder, text_encoder_2 and name as stored in that component's file.
    Written independently of to_ldm_sdxl (name by name, no tensors), so that apply_ldm_map(...) == to_ldm_sdxl(...)
    checks both."""
    out = []
    L = unet_config["layers_per_block"]
    up = list(unet_config["up_block_types"])
    for name in unet_sd:
        out.append({"key": UNET_PREFIX + unet_name_to_ldm(name, L, up), "op": "copy", "sources": [["unet", name]]})
    n_up = len(vae_config["up_block_types"])
    for name in vae_sd:
        ldm, is_proj = vae_name_to_ldm(name, n_up)
        out.append({"key": VAE_PREFIX + ldm, "op": "conv1x1" if is_proj else "copy", "sources": [["vae", name]]})
    for name in text_sd:
        out.append({"key": SDXL_CLIP_PREFIX + clip_key(name), "op": "copy", "sources": [["text_encoder", name]]})
    qkv = {}
    for name in text_2_sd:
        src = ["text_encoder_2", name]
        if name == "text_projection.weight":
            out.append({"key": SDXL_OPENCLIP_PREFIX + "text_projection", "op": "transpose", "sources": [src]})
            continue
        full = clip_key(name)
        if full in _OPENCLIP_TOP:
            out.append({"key": SDXL_OPENCLIP_PREFIX + _OPENCLIP_TOP[full], "op": "copy", "sources": [src]})
            continue
        m = re.fullmatch(r"text_model\.encoder\.layers\.(\d+)\.(.+)\.(weight|bias)", full)
        if not m:
            raise KeyError(f"no SDXL OpenCLIP name for '{name}'")
        i, module, param = int(m[1]), m[2], m[3]
        if module in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"):
            qkv.setdefault((i, param), {})[module[len("self_attn.")]] = src
        elif module in _OPENCLIP_LAYER:
            out.append({"key": f"{SDXL_OPENCLIP_PREFIX}transformer.resblocks.{i}.{_OPENCLIP_LAYER[module]}.{param}",
                        "op": "copy", "sources": [src]})
        else:
            raise KeyError(f"no SDXL OpenCLIP name for '{name}'")
    for (i, param), parts in sorted(qkv.items()):
        out.append({"key": f"{SDXL_OPENCLIP_PREFIX}transformer.resblocks.{i}.attn.in_proj_{param}", "op": "cat0",
                    "sources": [parts["q"], parts["k"], parts["v"]]})
    return out


def apply_ldm_map(entries, components):
    """components: {component: {name: tensor}} -> {LDM name: tensor} (torch tensors)."""
    import torch
    out = {}
    for e in entries:
        ts = [components[c][n] for c, n in e["sources"]]
        op = e["op"]
        if op == "copy":
            t = ts[0]
        elif op == "cat0":
            t = torch.cat(ts, dim=0)
        elif op == "transpose":
            t = ts[0].T.contiguous()
        elif op == "conv1x1":
            t = ts[0].reshape(tuple(ts[0].shape) + (1, 1))
        else:
            raise ValueError(f"unknown op {op!r}")
        if e["key"] in out:
            raise KeyError(f"two entries for '{e['key']}'")
        out[e["key"]] = t
    return out


def check_ldm_map(entries, components, extras, ldm):
    """The map (with the `extras` it does not make) rebuilds exactly the checkpoint `ldm`: same names, dtypes, values."""
    import torch
    rebuilt = dict(apply_ldm_map(entries, components), **extras)
    if set(rebuilt) != set(ldm):
        raise AssertionError(f"ldm map: names differ: {sorted(set(rebuilt) ^ set(ldm))[:8]}")
    bad = [k for k in ldm if rebuilt[k].dtype != ldm[k].dtype or not torch.equal(rebuilt[k], ldm[k])]
    if bad:
        raise AssertionError(f"ldm map: tensors differ: {bad[:5]}")
