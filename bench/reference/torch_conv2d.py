"""PyTorch/cuDNN reference for `sdgen --bench-conv2d`: times F.conv2d on the SD1.5 conv rows (the rows of
shared/anchors/h100-pytorch.json) in the same run as sdgen's benchmark. Median, p10, p90 of CUDA-event times
after warm-up; cudnn.benchmark on, channels_last, TF32 off for fp32 (as the anchors were measured)."""
import argparse
import json

import torch
import torch.nn.functional as F

from cuda_timing import time_ms  # this script's folder is on sys.path

ROWS = [  # name, N, Cin, Cout, H, W, K, stride (padding K // 2)
    ("unet.conv_in", 2, 4, 320, 64, 64, 3, 1), ("unet.d0.res", 2, 320, 320, 64, 64, 3, 1),
    ("unet.d0.down", 2, 320, 320, 64, 64, 3, 2), ("unet.d1.res1", 2, 320, 640, 32, 32, 3, 1),
    ("unet.d1.res", 2, 640, 640, 32, 32, 3, 1), ("unet.d1.skip1x1", 2, 320, 640, 32, 32, 1, 1),
    ("unet.d2.res1", 2, 640, 1280, 16, 16, 3, 1), ("unet.d2.res", 2, 1280, 1280, 16, 16, 3, 1),
    ("unet.d3.res", 2, 1280, 1280, 8, 8, 3, 1), ("unet.u0.res", 2, 2560, 1280, 8, 8, 3, 1),
    ("unet.u1.res", 2, 2560, 1280, 16, 16, 3, 1), ("unet.u1.res3", 2, 1920, 1280, 16, 16, 3, 1),
    ("unet.u2.res1", 2, 1920, 640, 32, 32, 3, 1), ("unet.u2.res3", 2, 960, 640, 32, 32, 3, 1),
    ("unet.u3.res1", 2, 960, 320, 64, 64, 3, 1), ("unet.u3.res", 2, 640, 320, 64, 64, 3, 1),
    ("unet.conv_out", 2, 320, 4, 64, 64, 3, 1), ("vae.conv_in", 1, 4, 512, 64, 64, 3, 1),
    ("vae.512@64", 1, 512, 512, 64, 64, 3, 1), ("vae.512@128", 1, 512, 512, 128, 128, 3, 1),
    ("vae.512@256", 1, 512, 512, 256, 256, 3, 1), ("vae.512to256@256", 1, 512, 256, 256, 256, 3, 1),
    ("vae.256@512", 1, 256, 256, 512, 512, 3, 1), ("vae.256to128@512", 1, 256, 128, 512, 512, 3, 1),
    ("vae.128@512", 1, 128, 128, 512, 512, 3, 1), ("vae.conv_out", 1, 128, 3, 512, 512, 3, 1),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    out = []
    print(f"{'layer':18} {'prec':5} {'median ms':>10} {'p10':>8} {'p90':>8} {'TFLOP/s':>8}")
    for name, n, cin, cout, h, w, k, s in ROWS:
        for prec, dtype in (("fp32", torch.float32), ("fp16", torch.float16)):
            g = torch.Generator(device="cuda").manual_seed(0)
            x = torch.randn(n, cin, h, w, device="cuda", dtype=dtype, generator=g).to(memory_format=torch.channels_last)
            wt = torch.randn(cout, cin, k, k, device="cuda", dtype=dtype, generator=g).to(memory_format=torch.channels_last)
            b = torch.randn(cout, device="cuda", dtype=dtype, generator=g)
            t = time_ms(lambda: F.conv2d(x, wt, b, stride=s, padding=k // 2), args.warmup, args.reps)
            ho, wo = (h + 2 * (k // 2) - k) // s + 1, (w + 2 * (k // 2) - k) // s + 1
            flops = 2.0 * n * ho * wo * cout * cin * k * k
            t.update(layer=name, precision=prec, tflops=flops / (t["median"] * 1e-3) / 1e12)
            out.append(t)
            print(f"{name:18} {prec:5} {t['median']:10.4f} {t['p10']:8.4f} {t['p90']:8.4f} {t['tflops']:8.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "cudnn": torch.backends.cudnn.version(), "rows": out}, f, indent=1)


if __name__ == "__main__":
    main()
