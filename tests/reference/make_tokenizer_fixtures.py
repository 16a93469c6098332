#!/usr/bin/env python3
"""Writes the CLIP tokenizer parity fixtures from Hugging Face transformers' reference tokenizer.

Outputs (committed):
  tests/fixtures/tokenizer/clip_cases.json   prompts with the ids CLIPTokenizer gives them
  tests/fixtures/tokenizer/fast/tokenizer.json   the same vocabulary in the `tokenizers` (fast) format

The reference is the Python ("slow") CLIPTokenizer of transformers 4.x without ftfy installed: that is what
Stable Diffusion pipelines have used to tokenize prompts, and it is the one sdgen's ClipBpeTokenizer
reproduces. transformers 5 dropped the slow class (CLIPTokenizer became the fast one), so this script needs
`transformers<5`:

  python3 -m venv /tmp/tokvenv && /tmp/tokvenv/bin/pip install "transformers<5" tokenizers regex
  /tmp/tokvenv/bin/python tests/reference/make_tokenizer_fixtures.py

The fast tokenizer differs from the slow one on a few inputs (runs of CJK ideographs, invisible format
characters such as U+200B); for those cases the fixture also records `fast_ids`, for information only.
"""
import json
import pathlib
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
VOCAB_DIR = REPO / "models" / "vocab" / "clip"
OUT_DIR = REPO / "tests" / "fixtures" / "tokenizer"
MAX_LENGTH = 77

PROMPTS = [
    # plain
    "a photo of a cat",
    "An astronaut riding a horse on the moon, highly detailed, 8k",
    "masterpiece, best quality, 1girl, solo, long hair, looking at viewer",
    "a beautiful landscape painting of mountains at sunset by greg rutkowski, trending on artstation",
    "A PHOTO OF A CAT",
    "ALL CAPS SHOUTING PROMPT WITH MiXeD CaSe",
    "",
    "   ",
    # prompt-weighting syntax of common front ends
    "(red:1.3) cat",
    "((masterpiece)), [blurry], {cute}, (((best quality)))",
    "a cat AND a dog",
    "a [cat:dog:0.5] in a field",
    "<lora:detail_tweaker:0.8> portrait, (detailed eyes:1.2)",
    # numbers and punctuation
    "1234567890",
    "3.14159 and 2.71828",
    "1,000,000 stars, 24mm f/1.8 lens, 1/250s",
    "hello!!! ??? ... --- ***",
    "#hashtag @mention http://example.com/a?b=c&d=e",
    "snake_case and kebab-case and CamelCase",
    "C++ and C# code",
    "$100 €50 £20 ¥1000",
    "©®™ °C ±5%",
    # apostrophes and contractions
    "it's a dog's life",
    "don't won't can't shouldn't",
    "we're they've I'm you'll he'd",
    "IT'S WE'RE THEY'VE",
    "rock 'n' roll o'clock",
    "'s 't 're 've 'm 'll 'd",
    "\u2018smart quotes\u2019 and \u201cdouble\u201d",
    # whitespace
    "a  photo \t of\n\na   cat",
    "\n\n  leading and trailing  \t",
    "tabs\tand\rcarriage\r\nreturns",
    "non\u00a0breaking and em\u2003space",
    "line\u2028separator",
    # accents, other scripts
    "café crème brûlée",
    "naïve façade jalapeño",
    "cafe\u0301 with a combining accent",
    "Ångström straße",
    "İstanbul at night",
    "ΣΊΣΥΦΟΣ and ΟΔΥΣΣΕΥΣ",
    "Москва зимой, ПРИВЕТ мир",
    "東京の夜景",
    "猫と犬",
    "中文提示词",
    "한국어 프롬프트",
    "日本語とEnglish混合",
    "fullwidth ＡＢＣ１２３",
    "superscript x² and ½ and Arabic digits ٣٤",
    "ﬁne ligature, Kelvin \u212a, long \u017fong",
    "Ǆǅǆ titlecase",
    # symbols and emoji
    "emoji 🐱🐶 cat",
    "🔥🔥🔥",
    "flag 🇯🇵",
    "family 👨\u200d👩\u200d👧 and heart ❤️",
    "math ∑ ∞ ≈ ±",
    # characters the reference removes
    "zero\u200bwidth and soft\u00adhyphen",
    "control\x07bell and null\x00char",
    "replacement \ufffd char",
    # special tokens typed into the prompt
    "<|startoftext|>inside text",
    "a<|endoftext|>b",
    "!<|endoftext|>",
    "<|ENDOFTEXT|> upper case",
    # truncation
    "a very detailed painting of " * 20,
    "word " * 80,
    "a " * 75,
    "a " * 76,
    ("masterpiece, best quality, ultra detailed, 8k wallpaper, beautiful detailed eyes, cinematic lighting, "
     "dramatic shadows, volumetric fog, depth of field, bokeh, sharp focus, intricate details, hyperrealistic, "
     "octane render, unreal engine 5, trending on artstation, award winning photograph, golden hour"),
    "長い日本語のプロンプト、" * 10,
    # more plain prompts of the kinds people write
    "portrait of a woman, oil on canvas, rembrandt lighting",
    "cyberpunk city street at night, neon signs, rain, reflections",
    "a cute corgi wearing sunglasses, studio photo, 85mm",
    "isometric 3d render of a tiny island, low poly, pastel colors",
    "watercolor sketch of a lighthouse; soft edges; muted palette",
    "macro shot of a dew drop on a leaf -- sharp, crisp, detailed",
    "steampunk airship above victorian london, 1890s",
    "anime style, 2girls, cherry blossoms, school uniform, smiling",
    "the quick brown fox jumps over the lazy dog",
    "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG",
    # numbers, units, dates, versions
    "4k 8K 16k 1080p 720P",
    "2024-01-31 12:34:56",
    "v1.5 vs v2.1 vs sdxl-1.0",
    "0.001 0.5 -3 +7 1e-5 6.02e23",
    "x1.5 upscale, 2x, 10x zoom, 100%",
    "007 and 0042 and 000",
    "room 101, floor 3/4, 50/50 chance",
    # punctuation runs and brackets
    "(((((((deep nesting)))))))",
    "[[[ ]]] {{{ }}} <<< >>>",
    "a:b;c,d.e!f?g",
    "...and then... nothing.",
    "'quoted' \"double\" `backtick`",
    "under_score__double___triple",
    "slash/back\\slash|pipe",
    "~tilde ^caret =equals +plus",
    "key=value&other=thing#frag",
    "!!!",
    "a!b",
    # more contractions
    "I'd've and y'all",
    "you're You'RE YOU'RE",
    "ma'am, o'neill, rock'n'roll",
    "’tis the season",
    # more scripts
    "Straße, Grüße, Æsir, Øresund, Þórr",
    "Ελληνικά γράμματα και τόνοι",
    "Українська мова, ґанок, їжак",
    "עברית מימין לשמאל",
    "العربية من اليمين إلى اليسار",
    "हिन्दी में प्रॉम्प्ट",
    "ภาษาไทย ไม่มีช่องว่าง",
    "Tiếng Việt có dấu",
    "ひらがな カタカナ 漢字",
    "ｈａｌｆ　ｗｉｄｔｈ？",
    "ＡＢＣ full-width capitals",
    "𝐁𝐨𝐥𝐝 𝕕𝕠𝕦𝕓𝕝𝕖 math letters",
    "Ⅻ roman numeral and ① circled",
    # emoji and symbols
    "🙂🙃😉 faces",
    "skin tones 👍🏻👍🏿",
    "keycap 1️⃣ and #️⃣",
    "rainbow flag 🏳️‍🌈",
    "arrows → ← ↑ ↓ ⇒",
    "box drawing ┌─┐│└┘",
    "music ♪ ♫ and chess ♔",
    "weather ☀️🌧️❄️",
    # whitespace oddities
    "a\u3000ideographic space",
    "many          spaces",
    "\t\ttabs only\t",
    "trailing newline\n",
    # long prompts
    ", ".join(["best quality"] * 40),
    "🐱" * 100,
    "supercalifragilisticexpialidocious " * 12,
    "a, " * 100,
    "0123456789" * 12,
]


def main():
    try:
        import transformers
        from transformers import CLIPTokenizer, CLIPTokenizerFast
    except ImportError as e:
        sys.exit(f"needs transformers<5 with tokenizers: {e}")
    if int(transformers.__version__.split(".")[0]) >= 5:
        sys.exit(f"transformers {transformers.__version__} has no slow CLIPTokenizer; install 'transformers<5'")
    try:
        import ftfy  # noqa: F401
        sys.exit("ftfy is installed: CLIPTokenizer would use it; run this in an environment without ftfy")
    except ImportError:
        pass

    vocab, merges = str(VOCAB_DIR / "vocab.json"), str(VOCAB_DIR / "merges.txt")
    slow = CLIPTokenizer(vocab_file=vocab, merges_file=merges)
    fast = CLIPTokenizerFast(vocab_file=vocab, merges_file=merges)
    content_slots = MAX_LENGTH - 2

    cases = []
    for text in PROMPTS:
        ids = slow(text, max_length=MAX_LENGTH, padding="max_length", truncation=True)["input_ids"]
        content = len(slow(text, add_special_tokens=False)["input_ids"])
        case = {"text": text, "ids": ids, "length": min(content, content_slots) + 2,
                "truncated": content > content_slots, "dropped": max(0, content - content_slots)}
        fast_ids = fast(text, max_length=MAX_LENGTH, padding="max_length", truncation=True)["input_ids"]
        if fast_ids != ids:
            case["fast_ids"] = fast_ids
        cases.append(case)

    OUT_DIR.mkdir(parents=True, exist_ok=True)
    fixture = {
        "about": "CLIP tokenizer parity cases; written by tests/reference/make_tokenizer_fixtures.py, do not edit",
        "reference": f"transformers {transformers.__version__} CLIPTokenizer (slow, no ftfy)",
        "vocab": "models/vocab/clip",
        "max_length": MAX_LENGTH,
        "bos_id": slow.bos_token_id,
        "eos_id": slow.eos_token_id,
        "pad_id": slow.pad_token_id,
        "cases": cases,
    }
    path = OUT_DIR / "clip_cases.json"
    # One case per line keeps diffs of a regenerated fixture readable.
    body = ",\n".join("    " + json.dumps(c, ensure_ascii=False) for c in cases)
    head = json.dumps({k: v for k, v in fixture.items() if k != "cases"}, ensure_ascii=False, indent=2)[:-2]
    path.write_text(head + ',\n  "cases": [\n' + body + "\n  ]\n}\n", encoding="utf-8")
    json.loads(path.read_text(encoding="utf-8"))  # must round-trip
    differing = sum("fast_ids" in c for c in cases)
    print(f"wrote {path}: {len(cases)} cases, {sum(c['truncated'] for c in cases)} truncated, "
          f"{differing} where the fast tokenizer differs")

    write_fast_fixture(CLIPTokenizerFast, vocab, merges)


def write_fast_fixture(fast_class, vocab, merges):
    """Saves a fresh fast tokenizer and keeps only tokenizer.json, re-serialized compactly.

    A fresh instance, because calling one with padding/truncation stores those settings in its tokenizer.json.
    """
    try:
        from tokenizers import Tokenizer
    except ImportError:
        print("tokenizers is not importable: skipped the tokenizer.json fixture")
        return
    fast = fast_class(vocab_file=vocab, merges_file=merges)
    with tempfile.TemporaryDirectory() as tmp:
        fast.save_pretrained(tmp)
        data = json.loads(pathlib.Path(tmp, "tokenizer.json").read_text(encoding="utf-8"))
    out = OUT_DIR / "fast" / "tokenizer.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    reloaded = Tokenizer.from_file(str(out))  # the compact form must still load in `tokenizers`
    check = "a photo of a cat"
    assert reloaded.encode(check).ids == fast(check)["input_ids"], "reloaded tokenizer.json disagrees"
    print(f"wrote {out} ({out.stat().st_size} bytes, merges stored as "
          f"{'pairs' if isinstance(data['model']['merges'][0], list) else 'strings'})")


if __name__ == "__main__":
    main()
