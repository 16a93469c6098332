"""Fixtures for folders shaped like the real checkpoints people download (issue 15, items 1 and 2).

Sections of make_fixtures.py (`--only realsched,tf5text`); `h` is the make_fixtures module (log, write_json, ...).

realsched  Tiny SD 1.x / SD 2.x folders (tests/data/tiny-sd1, tiny-sd2) whose scheduler/scheduler_config.json is
           the file the real releases ship (written by old diffusers: no timestep_spacing), plus two configs that
           diffusers 0.42.1 itself writes with every field explicit. Each folder is loaded with
           StableDiffusionPipeline.from_pretrained and every sampler is made as a diffusers user switches
           samplers, SchedulerClass.from_config(pipe.scheduler.config[, use_karras_sigmas=True]); the images and
           each scheduler's resolved config go to fixtures/realsched.{json,safetensors}. Only the scheduler file
           and model_index.json differ from the tiny folders, so the fixture stores those two texts and the C++
           test builds the same folder around the tiny model's components.
tf5text    A tiny CLIP text encoder saved by transformers 5 as CLIPTextModel (keys without the text_model. level)
           and, with the same weights, as CLIPTextModelWithProjection (text_model.* + text_projection.weight):
           tests/data/tiny-clip-tf5/, with float64 outputs in fixtures/text_encoder_tf5.{json,safetensors}.
"""
import copy
import json
import pathlib
import shutil
import tempfile

import torch

import tiny_models

REPO = pathlib.Path(__file__).resolve().parent.parent.parent

# stable-diffusion-v1-5/stable-diffusion-v1-5 scheduler/scheduler_config.json (the text of issue 15).
SD15_SCHEDULER = (
    '{"_class_name": "PNDMScheduler", "_diffusers_version": "0.6.0", "beta_end": 0.012, '
    '"beta_schedule": "scaled_linear",\n "beta_start": 0.00085, "num_train_timesteps": 1000, '
    '"set_alpha_to_one": false, "skip_prk_steps": true,\n "steps_offset": 1, "trained_betas": null, '
    '"clip_sample": false}\n')
# stabilityai/stable-diffusion-2-1: the same fields, DDIMScheduler, 0.8.0, v_prediction.
SD21_SCHEDULER = (
    '{"_class_name": "DDIMScheduler", "_diffusers_version": "0.8.0", "beta_end": 0.012, '
    '"beta_schedule": "scaled_linear",\n "beta_start": 0.00085, "clip_sample": false, "num_train_timesteps": 1000, '
    '"prediction_type": "v_prediction",\n "set_alpha_to_one": false, "skip_prk_steps": true, "steps_offset": 1, '
    '"trained_betas": null}\n')

# run name: (scheduler class, from_config keyword arguments). sdgen: sampler kind, Karras asked for.
RUNS = {
    "ddim": ("DDIMScheduler", {}),
    "euler": ("EulerDiscreteScheduler", {}),
    "euler_karras": ("EulerDiscreteScheduler", {"use_karras_sigmas": True}),
    "euler_a": ("EulerAncestralDiscreteScheduler", {}),
    "dpmpp_2m": ("DPMSolverMultistepScheduler", {}),
    "dpmpp_2m_karras": ("DPMSolverMultistepScheduler", {"use_karras_sigmas": True}),
}


def base_folder(out, name):
    """The tiny model folder: the one the 'models' section just wrote into `out`, else the committed one."""
    return out / name if (out / name).is_dir() else REPO / "tests" / "data" / name


def build_case(tmp, case, base, scheduler_class, scheduler_text):
    """A copy of `base` whose scheduler file is `scheduler_text` and whose model_index names `scheduler_class`."""
    d = tmp / case
    shutil.copytree(base, d)
    (d / "scheduler" / "scheduler_config.json").write_text(scheduler_text, encoding="utf-8")
    index = json.loads((d / "model_index.json").read_text(encoding="utf-8"))
    index["scheduler"] = ["diffusers", scheduler_class]
    index_text = json.dumps(index, indent=2, sort_keys=True) + "\n"
    (d / "model_index.json").write_text(index_text, encoding="utf-8")
    return d, index_text


def saved_config_text(scheduler):
    """What scheduler.save_config writes (diffusers 0.42.1: every __init__ field plus the kept extra fields)."""
    with tempfile.TemporaryDirectory() as t:
        scheduler.save_config(t)
        return (pathlib.Path(t) / "scheduler_config.json").read_text(encoding="utf-8")


@torch.no_grad()
def run_pipeline(pipe, a):
    result = pipe(a["prompt"], negative_prompt=a["negative_prompt"], num_inference_steps=a["num_inference_steps"],
                  guidance_scale=a["guidance_scale"], height=a["height"], width=a["width"],
                  generator=torch.Generator("cpu").manual_seed(a["seed"]), output_type=a["output_type"])
    return torch.from_numpy(result.images.copy())


def make_realsched(out, h):
    import diffusers
    a = h.PIPELINE_ARGS
    tensors, cases = {}, {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = pathlib.Path(tmp_name)
        todo = [("sd15", "tiny-sd1", "PNDMScheduler", SD15_SCHEDULER),
                ("sd21", "tiny-sd2", "DDIMScheduler", SD21_SCHEDULER)]
        while todo:
            case, base_name, cls_name, text = todo.pop(0)
            folder, index_text = build_case(tmp, case, base_folder(out, base_name), cls_name, text)
            pipe = h.load_pipeline(folder)
            loaded = pipe.scheduler.config  # FrozenDict: what a user passes to from_config
            if case == "sd15":  # configs written by diffusers 0.42.1 itself, every field explicit
                todo.append(("sd15_resaved", "tiny-sd1", "PNDMScheduler", saved_config_text(pipe.scheduler)))
                dpm = diffusers.DPMSolverMultistepScheduler.from_config(loaded, use_karras_sigmas=True)
                todo.append(("sd15_dpm_karras_saved", "tiny-sd1", "DPMSolverMultistepScheduler",
                             saved_config_text(dpm)))
            runs = []
            for run, (run_cls, kwargs) in RUNS.items():
                sched = getattr(diffusers, run_cls).from_config(loaded, **kwargs)
                pipe.scheduler = sched
                image = run_pipeline(pipe, a)
                key = f"{case}.{run}.image"
                tensors[key] = image
                sigmas = h.sigmas_of(sched)
                runs.append({"run": run, "class": run_cls, "from_config_kwargs": kwargs,
                             "karras": bool(kwargs.get("use_karras_sigmas", False)),
                             "config": dict(sched.config),
                             "timesteps": [float(v) for v in sched.timesteps.tolist()],
                             "sigmas": None if sigmas is None else [float(v) for v in sigmas.tolist()],
                             "init_noise_sigma": float(sched.init_noise_sigma), "image": key})
                h.log(f"realsched {case} {run}: spacing {sched.config.get('timestep_spacing')}, "
                      f"steps_offset {sched.config.get('steps_offset')}, timesteps {runs[-1]['timesteps']}, "
                      f"image mean {float(image.mean()):.4f}")
            cases[case] = {"base": f"tests/data/{base_name}", "scheduler_config.json": text,
                           "model_index.json": index_text, "pipeline_scheduler_class": type(pipe.scheduler).__name__,
                           "loaded_config": dict(loaded), "runs": runs}
    h.write_tensors(out / "fixtures" / "realsched.safetensors", tensors)
    h.write_json(out / "fixtures" / "realsched.json", {
        "about": ("issue 15 item 1: folders with real-checkpoint scheduler files; each sampler made with "
                  "Class.from_config(pipe.scheduler.config, **from_config_kwargs); docs/reference-fixtures.md"),
        "pipeline": "diffusers StableDiffusionPipeline, fp32, CPU, safety_checker None",
        "args": a, "cases": cases, "layouts": {"CASE.RUN.image": "[1,16,16,3] NHWC float in [0,1]"},
        "versions": h.versions(), "tensor_shapes": h.tensor_index(tensors)})


TF5_TEXT = dict(vocab_size=1000, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                max_position_embeddings=77, hidden_act="quick_gelu", projection_dim=16, layer_norm_eps=1e-5,
                bos_token_id=998, eos_token_id=999, pad_token_id=999)


def saved_keys(path):
    from safetensors import safe_open
    with safe_open(str(path), framework="pt") as f:
        return sorted(f.keys())


def same_state(a, b, what):
    sa = {k: v for k, v in a.state_dict().items() if not k.endswith("position_ids")}
    sb = {k: v for k, v in b.state_dict().items() if not k.endswith("position_ids")}
    if set(sa) != set(sb) or any(not torch.equal(sa[k].float(), sb[k].float()) for k in sa):
        raise AssertionError(f"{what}: reloaded weights differ")


@torch.no_grad()
def make_tf5_text(out, h):
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection
    torch.manual_seed(3000)  # only the constructors' default init draws from it; every parameter is re-drawn
    plain = CLIPTextModel(CLIPTextConfig(**TF5_TEXT)).eval()
    tiny_models.reinit_(plain, 3001)
    proj = CLIPTextModelWithProjection(CLIPTextConfig(**TF5_TEXT)).eval()
    tiny_models.reinit_(proj, 3002)
    proj.text_model.load_state_dict(plain.state_dict())

    folder = out / "tiny-clip-tf5"
    shutil.rmtree(folder, ignore_errors=True)
    keys = {}
    for name, model, cls in (("text_encoder", plain, CLIPTextModel),
                             ("text_encoder_with_projection", proj, CLIPTextModelWithProjection)):
        model.half().save_pretrained(str(folder / name))
        model.float()
        keys[name] = saved_keys(folder / name / "model.safetensors")
        same_state(model, cls.from_pretrained(str(folder / name)), name)
        h.log(f"tf5text {name}: {len(keys[name])} tensors, e.g. {keys[name][:3]}; reloads bit-identically")
    if any(k.startswith("text_model.") for k in keys["text_encoder"]):
        raise AssertionError("transformers saved CLIPTextModel with 'text_model.' names: not the layout this "
                             "fixture is for")
    if "text_projection.weight" not in keys["text_encoder_with_projection"]:
        raise AssertionError("CLIPTextModelWithProjection saved no text_projection.weight")
    with tempfile.TemporaryDirectory() as t:  # for the record: a loaded model saved again
        CLIPTextModel.from_pretrained(str(folder / "text_encoder")).save_pretrained(t)
        resaved = saved_keys(pathlib.Path(t) / "model.safetensors")

    g = torch.Generator().manual_seed(3003)
    lengths = [2, 6, 30, 77]
    ids = torch.full((len(lengths), 77), TF5_TEXT["pad_token_id"], dtype=torch.int64)
    for i, n in enumerate(lengths):
        ids[i, 0] = TF5_TEXT["bos_token_id"]
        ids[i, 1:n - 1] = torch.randint(0, 998, (n - 2,), generator=g)
        ids[i, n - 1] = TF5_TEXT["eos_token_id"]
    te64 = copy.deepcopy(plain).double()
    res = te64(ids, output_hidden_states=True)
    with_proj = copy.deepcopy(proj).double()(ids, output_hidden_states=True)
    if not torch.allclose(with_proj.last_hidden_state, res.last_hidden_state, rtol=0, atol=1e-12):
        raise AssertionError("CLIPTextModelWithProjection's last_hidden_state differs from CLIPTextModel's")
    t = {"input_ids": ids, "last_hidden_state": res.last_hidden_state,
         "clip_skip1": te64.final_layer_norm(res.hidden_states[-2])}
    h.write_tensors(out / "fixtures" / "text_encoder_tf5.safetensors", t)
    h.write_json(out / "fixtures" / "text_encoder_tf5.json", {
        "model": "tests/data/tiny-clip-tf5/{text_encoder,text_encoder_with_projection} (fp16, the same weights)",
        "dtype": "computed in float64, stored as float32", "config": TF5_TEXT,
        "saved_keys": keys, "keys_after_from_pretrained_then_save_pretrained": resaved,
        "layouts": {"input_ids": "[4,77] int64, bos, random ids < 998, eos, then pad (= eos)",
                    "last_hidden_state": "[4,77,32] after final_layer_norm",
                    "clip_skip1": "[4,77,32] final_layer_norm(hidden_states[-2])"},
        "versions": h.versions(), "tensor_shapes": h.tensor_index(t)})
