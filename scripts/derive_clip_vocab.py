#!/usr/bin/env python3
"""Derives CLIP's tokenizer files (vocab.json + merges.txt) from the BPE merge list shipped on PyPI.

Run once; the outputs are committed under models/vocab/clip/. The model hub that normally serves these files
cannot be reached from this project's machines, but the `open-clip-torch` wheel carries the original merge
list (`open_clip/bpe_simple_vocab_16e6.txt.gz`, the file OpenAI's CLIP shipped). CLIP builds its vocabulary
from that list in a fixed order, so the ids are reproducible:

  1. the 256 byte symbols of the byte-level alphabet, in the alphabet's own order (printable Latin-1 first),
  2. the same 256 symbols followed by the end-of-word marker "</w>",
  3. one token per merge, for the first 49152 - 256 - 2 merges (line 0 of the list is a header),
  4. "<|startoftext|>" (49406) and "<|endoftext|>" (49407).

With --verify (the default when `transformers` is importable), a CLIPTokenizer is built from the written files
and checked against ids known from openai/clip-vit-large-patch14, and the slow and fast tokenizers are
compared on a few prompts.

Usage:
  python3 scripts/derive_clip_vocab.py                     # downloads the wheel with pip into a temp dir
  python3 scripts/derive_clip_vocab.py --source FILE.txt.gz
"""
import argparse
import gzip
import hashlib
import json
import pathlib
import subprocess
import sys
import tempfile
import zipfile

REPO = pathlib.Path(__file__).resolve().parent.parent
WHEEL_SPEC = "open-clip-torch==3.3.0"
MEMBER = "open_clip/bpe_simple_vocab_16e6.txt.gz"
VOCAB_SIZE = 49408
MERGE_COUNT = 49152 - 256 - 2  # CLIP keeps this many merges: 49408 = 2*256 + merges + 2 special tokens
BOS, EOS = "<|startoftext|>", "<|endoftext|>"

# Ids taken from the published openai/clip-vit-large-patch14 tokenizer.
KNOWN_IDS = {
    "a photo of a cat": [49406, 320, 1125, 539, 320, 2368, 49407],
}


def byte_alphabet():
    """The byte-level alphabet: byte value -> printable symbol.

    Bytes that are printable Latin-1 characters stand for themselves; the remaining 68 bytes (controls, space,
    soft hyphen, ...) are given the code points 256, 257, ... in byte order, so no symbol is whitespace.
    """
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    # Order matters for the ids: printable bytes first (in the order above), then the remapped ones.
    order = printable + [b for b in range(256) if b not in printable]
    return [table[b] for b in order]


def fetch_merge_list(tmp: pathlib.Path) -> bytes:
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", str(tmp), WHEEL_SPEC],
                   check=True)
    wheels = sorted(tmp.glob("open_clip_torch-*.whl"))
    if not wheels:
        sys.exit(f"pip download {WHEEL_SPEC} produced no wheel in {tmp}")
    with zipfile.ZipFile(wheels[0]) as z:
        return z.read(MEMBER)


def derive(gz_bytes: bytes):
    lines = gzip.decompress(gz_bytes).decode("utf-8").split("\n")
    merges = [tuple(line.split()) for line in lines[1:1 + MERGE_COUNT]]
    if len(merges) != MERGE_COUNT or any(len(m) != 2 for m in merges):
        sys.exit(f"unexpected merge list: {len(merges)} merges, expected {MERGE_COUNT} pairs")
    alphabet = byte_alphabet()
    tokens = alphabet + [s + "</w>" for s in alphabet] + ["".join(m) for m in merges] + [BOS, EOS]
    if len(tokens) != VOCAB_SIZE or len(set(tokens)) != VOCAB_SIZE:
        sys.exit(f"derived vocabulary has {len(tokens)} tokens ({len(set(tokens))} distinct), expected {VOCAB_SIZE}")
    return {t: i for i, t in enumerate(tokens)}, merges


def write(out: pathlib.Path, vocab, merges):
    out.mkdir(parents=True, exist_ok=True)
    (out / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False, separators=(",", ":")) + "\n",
                                    encoding="utf-8")
    # Same layout as the hub's merges.txt: a version header, then one "left right" pair per line by rank.
    (out / "merges.txt").write_text("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges), encoding="utf-8")
    for name in ("vocab.json", "merges.txt"):
        digest = hashlib.sha256((out / name).read_bytes()).hexdigest()
        print(f"wrote {out / name}  sha256 {digest}")


def verify(out: pathlib.Path) -> bool:
    try:
        from transformers import CLIPTokenizer
    except ImportError:
        print("transformers is not importable: skipped the check against CLIPTokenizer")
        return True
    tok = CLIPTokenizer(vocab_file=str(out / "vocab.json"), merges_file=str(out / "merges.txt"))
    ok = True
    if len(tok) != VOCAB_SIZE or tok.bos_token_id != 49406 or tok.eos_token_id != 49407:
        print(f"FAIL: vocabulary size {len(tok)}, bos {tok.bos_token_id}, eos {tok.eos_token_id}")
        ok = False
    for text, ids in KNOWN_IDS.items():
        got = tok(text)["input_ids"]
        print(f"{'ok  ' if got == ids else 'FAIL'} {text!r} -> {got}")
        ok &= got == ids
    try:
        from transformers import CLIPTokenizerFast
        fast = CLIPTokenizerFast(vocab_file=str(out / "vocab.json"), merges_file=str(out / "merges.txt"))
        for text in ["a photo of a cat", "An astronaut riding a horse, 4k, trending on artstation",
                     "Portrait of a woman's face (detailed:1.2), café lighting"]:
            a, b = tok(text)["input_ids"], fast(text)["input_ids"]
            print(f"{'ok  ' if a == b else 'FAIL'} slow == fast for {text!r}")
            ok &= a == b
    except ImportError:
        print("CLIPTokenizerFast is not available: skipped the slow/fast comparison")
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source", type=pathlib.Path, help="bpe_simple_vocab_16e6.txt.gz (default: from the wheel)")
    p.add_argument("--out", type=pathlib.Path, default=REPO / "models" / "vocab" / "clip")
    p.add_argument("--no-verify", action="store_true")
    args = p.parse_args()

    if args.source:
        gz = args.source.read_bytes()
    else:
        with tempfile.TemporaryDirectory() as tmp:
            gz = fetch_merge_list(pathlib.Path(tmp))
    print(f"merge list sha256 {hashlib.sha256(gz).hexdigest()}")
    vocab, merges = derive(gz)
    write(args.out, vocab, merges)
    if not args.no_verify and not verify(args.out):
        sys.exit("verification failed")


if __name__ == "__main__":
    main()
