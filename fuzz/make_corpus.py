#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (fuzz/corpus/<target>/, a few small files each) from the test data
and from small hand-made inputs. Standard library only. Rerun after changing a target's input format:
    python3 fuzz/make_corpus.py
"""
import base64
import json
import os
import struct
import sys
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "corpus")
DATA = os.path.join(ROOT, "tests", "data")


def put(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def read(*parts):
    with open(os.path.join(*parts), "rb") as f:
        return f.read()


def safetensors(tensors, metadata=None):
    """tensors: {name: (dtype, shape, bytes)}"""
    header, body = {}, b""
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(body), len(body) + len(data)]}
        body += data
    if metadata:
        header["__metadata__"] = metadata
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + body


def safetensors_keys(path):
    n = struct.unpack("<Q", read(path)[:8])[0]
    header = json.loads(read(path)[8:8 + n])
    header.pop("__metadata__", None)
    return header


def png(chunks, width=2, height=2, colour=2):
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    channels = {0: 1, 2: 3}[colour]
    raw = b"".join(b"\0" + bytes(range(width * channels)) for _ in range(height))
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0))
    for t, d in chunks:
        out += chunk(t, d)
    return out + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


PARAMS = ("a red circle <lora:style:0.5>\nNegative prompt: blurry\nSteps: 3, Sampler: DPM++ 2M, CFG scale: 7.5, "
          "Seed: 7, Size: 16x16, Model: tiny-sd1, Version: sdgen 0.1.0")


def main():
    f32 = struct.pack("<4f", 1, -2, 0.5, 3)
    put("fuzz_safetensors", "f32", safetensors({"a": ("F32", [2, 2], f32)}, {"format": "pt"}))
    put("fuzz_safetensors", "mixed", safetensors({
        "w.f16": ("F16", [3], struct.pack("<3e", 1, 2, -0.25) + b"\0\0"[:0]),
        "w.bf16": ("BF16", [2], b"\x80\x3f\x00\xc0"),
        "ids": ("I64", [1, 2], struct.pack("<2q", 0, 1)),
        "empty": ("F32", [0, 4], b""),
        "scalar": ("F32", [], struct.pack("<f", 4))}))
    put("fuzz_safetensors", "truncated", safetensors({"a": ("F32", [2, 2], f32)})[:-5])

    sd1 = os.path.join(DATA, "tiny-sd1")
    for i, rel in enumerate(["model_index.json", "text_encoder/config.json", "unet/config.json", "vae/config.json",
                             "scheduler/scheduler_config.json"]):
        put("fuzz_config_json", rel.replace("/", "_"), bytes([i]) + read(sd1, rel))
    put("fuzz_config_json", "unet_sd2.json", b"\x02" + read(DATA, "tiny-sd2", "unet", "config.json"))
    put("fuzz_config_json", "sdgen.json", b"\x05" + read(ROOT, "models", "builtin", "sdgen-tiny", "sdgen.json"))
    put("fuzz_config_json", "scheduler_inf.json",
        b"\x04" + b'{"_class_name": "DPMSolverMultistepScheduler", "lambda_min_clipped": -Infinity, '
                  b'"beta_schedule": "scaled_linear", "use_karras_sigmas": true}')

    # A small byte-level BPE vocabulary in CLIP's shape: the byte symbols, with "</w>", a few merges, the specials.
    symbols = [chr(c) for c in range(ord("a"), ord("z") + 1)] + ["!", ",", "\u0120"]
    vocab = {s: i for i, s in enumerate(symbols)}
    for s in symbols:
        vocab[s + "</w>"] = len(vocab)
    merges = [("c", "a"), ("ca", "t</w>"), ("t", "h"), ("th", "e</w>")]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    vocab["<|startoftext|>"] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    sep = "\n=====\n"
    merges_txt = "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges)
    config = json.dumps({"model_max_length": 77, "pad_token": "!", "bos_token": "<|startoftext|>",
                         "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>"})
    put("fuzz_tokenizer_files", "vocab_merges", json.dumps(vocab) + sep + merges_txt + sep + sep + config)
    tok_json = {"model": {"type": "BPE", "end_of_word_suffix": "</w>", "vocab": vocab,
                          "merges": [f"{a} {b}" for a, b in merges]},
                "added_tokens": [{"id": vocab["<|startoftext|>"], "content": "<|startoftext|>", "special": True},
                                 {"id": vocab["<|endoftext|>"], "content": "<|endoftext|>", "special": True}]}
    put("fuzz_tokenizer_files", "tokenizer_json", sep + sep + json.dumps(tok_json) + sep + config + sep +
        json.dumps({"pad_token": "<|endoftext|>", "additional_special_tokens": ["<x>"]}))
    # finding 5 (docs/reliability.md): a tokenizer.json model "type" that is not a string ended the process
    put("fuzz_tokenizer_files", "type_not_string",
        b'\n=====\n\n=====\n{"model": {"type": ["c a", "ca t</w>", "t h", "th e</w>"]}, '
        b'"added_tokens": [{"id": 62, "content": "<|startoftext|>", "special": true}, {"ls": 63, "content": '
        b'"<|endoftext|>", "special": true}]}\n=====\n{"mode "<\x84\x9a\x91\x9aoftext|>"}\n=====\n'
        b'{"pad_token": "<|end/ftext|>", "additional_special_tokens": ["<x>"]}')

    for i, text in enumerate([b"a photo of a cat, highly detailed", "caf\u00e9 \u6771\u4eac \U0001F600 n\u0303".encode(),
                              b"<|startoftext|>x<|endoftext|>  \t\n it's 3.5m", b"\xff\xfe\xc3(\xe2\x28\xa1 bad utf8"]):
        put("fuzz_tokenizer_text", f"text{i}", text)

    for i, text in enumerate(["a (red:1.3) [circle] BREAK ((big)) \\(literal\\) <lora:style:0.5>",
                              "<lora:a:0.5:1.2> <lora:b:te=0.3:unet=1> <hypernet:x:1> (a [b (c:0.7)] d)",
                              "(" * 10 + "deep" + ")" * 10 + " AND BREAK, ,,,",
                              "x " * 120]):
        put("fuzz_prompt", f"prompt{i}", text)

    for fam, name in (("sd1", "tiny-sd1-ldm.safetensors"), ("sd2", "tiny-sd2-ldm.safetensors")):
        keys = safetensors_keys(os.path.join(DATA, name))
        lines = [f"{k} {','.join(map(str, v['shape'])) or '-'}" for k, v in sorted(keys.items())]
        put("fuzz_ldm_keys", fam, "\n".join(lines) + "\n")
        put("fuzz_ldm_keys", fam + "_unet_only",
            "\n".join(l for l in lines if l.startswith("model.diffusion_model.")) + "\n")

    kohya = "lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn1_to_q"
    put("fuzz_lora", "kohya", f"{kohya}.lora_down.weight 2,32 0.1\n{kohya}.lora_up.weight 32,2 0.2\n{kohya}.alpha - 1\n"
        "lora_te_text_model_encoder_layers_0_self_attn_k_proj.lora_down.weight 2,32 0.1\n"
        "lora_te_text_model_encoder_layers_0_self_attn_k_proj.lora_up.weight 32,2 0.1\n"
        "lora_te_text_model_encoder_layers_0_self_attn_k_proj.alpha - 2\n")
    put("fuzz_lora", "peft", "unet.down_blocks.0.attentions.0.proj_in.lora_A.weight 4,32,1,1 0.5\n"
        "unet.down_blocks.0.attentions.0.proj_in.lora_B.weight 32,4,1,1 0.5\n"
        "text_encoder.text_model.encoder.layers.0.mlp.fc1.lora_A.weight 2,32\n"
        "text_encoder.text_model.encoder.layers.0.mlp.fc1.lora_B.weight 37,2\n")
    put("fuzz_lora", "locon", "lora_unet_down_blocks_0_resnets_0_conv1.lora_down.weight 2,32,3,3 0.1\n"
        "lora_unet_down_blocks_0_resnets_0_conv1.lora_up.weight 32,2,1,1 0.1\n")

    put("fuzz_png", "params", png([(b"tEXt", b"parameters\0" + PARAMS.encode("latin-1"))]))
    put("fuzz_png", "itxt", png([(b"iTXt", b"parameters\0\0\0\0\0" + "caf\u00e9 \u6771\u4eac\nSteps: 2".encode()),
                                 (b"zTXt", b"comment\0\0" + zlib.compress(b"hello"))], colour=0))
    for name in ("i2i_init.png", "i2i_mask.png"):
        put("fuzz_image_decode", name, read(DATA, "fixtures", name))
    put("fuzz_image_decode", "grey", png([], 3, 2, 0))
    # A minimal baseline JPEG is hard to write by hand; the decoder's JPEG path is reached from this header.
    put("fuzz_image_decode", "jpeg_header", bytes.fromhex("ffd8ffe000104a46494600010100000100010000ffd9"))
    # finding 4 (docs/reliability.md): a DHT table of more than 256 codes overflowed stb_image's Huffman arrays
    put("fuzz_image_decode", "dht_overflow", bytes.fromhex(
        "ffd8ffc400121001003cffff01ffffffffd709ffffc4ffd8ffc0000f08002e08c3010200ff0000f9ffffda000edac0000fc301"
        "0200ff0000f9ffffda0008c3010200ff0000f9ffffda000effd8ffc0000f08082e0010ffffff00c3010200ffffda000eff4a00"
        "2ec3efc0000f08fffd000000ffd9ffc01bffffdfffff0000ffffffffd9"))

    nul = "\0"
    for i, args in enumerate([["-p", "a cat", "-s", "42", "-W", "512", "-H", "768", "--steps", "20", "-o", "x.png"],
                              ["-p", "cat", "--sampler=euler_a", "--karras", "--cfg-scale", "7.5", "-n", "dog",
                               "--lora", "a.safetensors:0.5", "--lora-dir", "loras", "--prompt-syntax", "plain"],
                              ["--bench-conv2d", "--shape", "2,320,320,64,64,3,1", "--algo", "auto", "--reps", "3"],
                              ["-p", "x", "-i", "in.png", "--mask", "m.png", "--strength", "0.6", "--vae-tiling"],
                              ["serve", "--devices", "0,1", "--port", "7860", "--max-pixels", "1048576",
                               "--queue", "8", "-m", "model"]]):
        put("fuzz_cli", f"args{i}", nul.join(args))

    init = base64.b64encode(read(DATA, "fixtures", "i2i_init.png")).decode()
    put("fuzz_http_request", "txt2img", b"\0" + json.dumps(
        {"prompt": "a red circle", "negative_prompt": "blurry", "seed": 7, "steps": 3, "width": 64, "height": 64,
         "sampler_name": "DPM++ 2M Karras", "cfg_scale": 7, "batch_size": 2, "n_iter": 1,
         "override_settings": {"CLIP_stop_at_last_layers": 2}}).encode())
    put("fuzz_http_request", "img2img", b"\1" + json.dumps(
        {"prompt": "x", "init_images": [init], "denoising_strength": 0.5, "mask": "data:image/png;base64," + init,
         "steps": 2, "sampler_index": "Euler a"}).encode())
    put("fuzz_http_request", "deep", b"\0" + b'{"prompt": [[[[[[["x"]]]]]]], "width": 1e400}')


if __name__ == "__main__":
    sys.exit(main())
