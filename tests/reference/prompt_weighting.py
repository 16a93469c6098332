"""Section `prompts` of make_fixtures.py (`--only prompts`): conditioning of webui-syntax prompts (issue 20).

For tests/data/tiny-sd1 and tiny-sd2, each case's prompt and negative prompt are turned into token windows the
way stable-diffusion-webui does it (modules/sd_hijack_clip.py, FrozenCLIPEmbedderWithCustomWordsBase):
  - the parsed fragments (text, weight) are given below as webui's parse_prompt_attention returns them for the
    prompt (the C++ test parses the prompt text itself and must find the same windows);
  - each fragment is tokenized alone by the model folder's tokenizer (no special tokens, no truncation);
  - tokens fill chunks of 75; when a chunk is full and the next token is not a comma but the chunk's last comma is
    at most 20 tokens back (comma_padding_backtrack, webui's default), the tokens after that comma move to the next
    chunk; BREAK closes the chunk;
  - a chunk is padded with EOS to 75, wrapped as BOS + 75 + EOS; when the tokenizer pads with another id (SD 2.x),
    everything after the first EOS becomes that id (webui's process_tokens);
  - each window goes through transformers' CLIPTextModel (float64, last layer) on its own; then webui's "Original"
    emphasis: z * multipliers (a float32 tensor), scaled by mean(z before) / mean(z after), the means over the
    whole window; the windows are concatenated along the sequence;
  - the prompt with fewer chunks is padded with the empty prompt's conditioning (webui's pad_cond_uncond).

fixtures/prompt_weighting_{sd1,sd2}.safetensors: per case C
  C.input_ids   [2k, 77] int64   the negative prompt's k windows, then the prompt's
  C.weights     [2k, 77]         the multipliers (float32 values)
  C.hidden      [2k, 77, D]      each window's last_hidden_state before emphasis
  C.conditioning [2, 77k, D]     negative prompt first, then the prompt: the UNet's context
The json has the prompts, the fragments, the chunk count and the versions.
"""
import torch

import tiny_models

from real_checkpoints import base_folder

CHUNK = 75
COMMA_BACKTRACK = 20

LONG_PROMPT = ("masterpiece, best quality, a lighthouse on a rocky coast at dusk, crashing waves, dramatic clouds, "
               "golden hour light, seagulls in the distance, a small wooden boat, wet rocks, moss, long exposure, "
               "cinematic composition, highly detailed, sharp focus, volumetric light, warm and cold colors, "
               "a winding path to the door, a red roof, an old keeper with a lantern, stars appearing in the sky, "
               "film grain, 35mm photograph")
BREAK = ("BREAK", -1.0)

# name: (prompt, fragments, negative prompt, fragments). The fragments are what webui's parse_prompt_attention
# returns for the prompt (checked with webui's function when this file was written).
CASES = {
    "long": (LONG_PROMPT, [(LONG_PROMPT, 1.0)], "blurry, lowres", [("blurry, lowres", 1.0)]),
    "weighted": (
        "a (red:1.3) circle on a [[blue]] background, ((highly detailed)), (sky:0.8), \\(parenthesis\\)",
        [("a ", 1.0), ("red", 1.3), (" circle on a ", 1.0), ("blue", 0.8264462809917354), (" background, ", 1.0),
         ("highly detailed", 1.2100000000000002), (", ", 1.0), ("sky", 0.8), (", (parenthesis)", 1.0)],
        "(blurry:1.2), [bad] hands",
        [("blurry", 1.2), (", ", 1.0), ("bad", 0.9090909090909091), (" hands", 1.0)]),
    "break": ("a red circle BREAK on a (blue) background",
              [("a red circle", 1.0), BREAK, ("on a ", 1.0), ("blue", 1.1), (" background", 1.0)],
              "", [("", 1.0)]),
}


def chunk_fragments(tokenizer, fragments):
    """webui's tokenize_line: [(tokens, multipliers)] of 77 each, and whether a comma moved tokens."""
    id_start, id_end = tokenizer.bos_token_id, tokenizer.eos_token_id
    id_pad = tokenizer.pad_token_id
    comma = tokenizer.get_vocab().get(",</w>")
    windows, backtracked = [], False
    tokens, mults, last_comma = [], [], -1

    def close():
        nonlocal tokens, mults, last_comma
        t = tokens + [id_end] * (CHUNK - len(tokens))
        m = mults + [1.0] * (CHUNK - len(mults))
        t = [id_start] + t + [id_end]
        m = [1.0] + m + [1.0]
        if id_pad != id_end:
            first = t.index(id_end)
            t = t[:first + 1] + [id_pad] * (len(t) - first - 1)
        windows.append((t, m))
        tokens, mults, last_comma = [], [], -1

    for text, weight in fragments:
        if (text, weight) == BREAK:
            close()
            continue
        for tok in tokenizer(text, truncation=False, add_special_tokens=False).input_ids:
            if tok == comma:
                last_comma = len(tokens)
            elif len(tokens) == CHUNK and last_comma != -1 and len(tokens) - last_comma <= COMMA_BACKTRACK:
                cut = last_comma + 1
                moved_t, moved_m = tokens[cut:], mults[cut:]
                tokens, mults = tokens[:cut], mults[:cut]
                close()
                tokens, mults = moved_t, moved_m
                backtracked = True
            if len(tokens) == CHUNK:
                close()
            tokens.append(tok)
            mults.append(weight)
    if tokens or not windows:
        close()
    return windows, backtracked


@torch.no_grad()
def encode(te, windows):
    """Per window: last_hidden_state, then webui's emphasis; returns (hidden [k,77,D], conditioning [1,77k,D])."""
    hidden, zs = [], []
    for tokens, mults in windows:
        z = te(torch.tensor([tokens])).last_hidden_state  # [1, 77, D] float64
        hidden.append(z[0])
        m = torch.tensor(mults, dtype=torch.float32).double()
        original_mean = z.mean()
        z = z * m.reshape(1, -1, 1)
        z = z * (original_mean / z.mean())
        zs.append(z)
    return torch.stack(hidden), torch.hstack(zs)


def make_prompt_fixtures(out, h):
    h.for_each_model(lambda key, o: make_for_model(key, o, h), out)


def make_for_model(key, out, h):
    import copy
    spec = tiny_models.TINY[key]
    folder = base_folder(out, spec["folder"])
    pipe = h.load_pipeline(folder)
    te = copy.deepcopy(pipe.text_encoder).double().eval()
    tok = pipe.tokenizer
    empty_windows, _ = chunk_fragments(tok, [("", 1.0)])
    empty_hidden, empty = encode(te, empty_windows)
    tensors, cases = {}, {}
    for name, (prompt, fragments, negative, neg_fragments) in CASES.items():
        cond_w, backtracked = chunk_fragments(tok, fragments)
        uncond_w, _ = chunk_fragments(tok, neg_fragments)
        if name == "long" and not (len(cond_w) == 2 and backtracked):
            raise AssertionError(f"{key}: the long prompt should fill 2 chunks, the first cut at a comma; "
                                 f"got {len(cond_w)} chunks, comma backtrack {backtracked}")
        hc, cond = encode(te, cond_w)
        hu, uncond = encode(te, uncond_w)
        k = max(len(cond_w), len(uncond_w))
        pad_u, pad_c = k - len(uncond_w), k - len(cond_w)
        # webui pads the shorter conditioning with the empty prompt's, one window per missing chunk
        cond = torch.cat([cond] + [empty] * pad_c, dim=1)
        uncond = torch.cat([uncond] + [empty] * pad_u, dim=1)
        all_w = uncond_w + empty_windows * pad_u + cond_w + empty_windows * pad_c
        hid = torch.cat([hu] + [empty_hidden] * pad_u + [hc] + [empty_hidden] * pad_c)
        tensors[f"{name}.input_ids"] = torch.tensor([w[0] for w in all_w])
        tensors[f"{name}.weights"] = torch.tensor([w[1] for w in all_w], dtype=torch.float32)
        tensors[f"{name}.hidden"] = hid
        tensors[f"{name}.conditioning"] = torch.cat([uncond, cond])
        cases[name] = {"prompt": prompt, "negative_prompt": negative, "fragments": fragments,
                       "negative_fragments": neg_fragments, "chunks": k,
                       "prompt_chunks": len(cond_w), "negative_chunks": len(uncond_w),
                       "comma_backtrack_moved_tokens": backtracked}
        h.log(f"{key}: prompts case {name}: {k} chunks (prompt {len(cond_w)}, negative {len(uncond_w)}), "
              f"|conditioning| max {float(tensors[f'{name}.conditioning'].abs().max()):.3f}")
    fx = out / "fixtures"
    h.write_tensors(fx / f"prompt_weighting_{key}.safetensors", tensors)
    h.write_json(fx / f"prompt_weighting_{key}.json", {
        "model": f"tests/data/{spec['folder']}", "dtype": "computed in float64, stored as float32",
        "about": __doc__, "chunk_length": CHUNK, "comma_padding_backtrack": COMMA_BACKTRACK,
        "tokenizer": f"{type(tok).__name__} of the model folder, each fragment alone, add_special_tokens=False",
        "cases": cases, "versions": h.versions(), "tensor_shapes": h.tensor_index(tensors)})
