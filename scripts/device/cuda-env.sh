# Sourced on the GPU machine: the CUDA runtime and cuDNN libraries of the PyTorch installation there (pip's
# nvidia-cudnn-cu13 and CUDA 13 wheels), for sdgen's cuDNN reference plugin (--bench-conv2d --reference cudnn).
site=$(python3 -c "import site; print(site.getsitepackages()[0])" 2>/dev/null || echo /opt/torch/.venv/lib/python3.12/site-packages)
for d in "$site"/nvidia/cudnn/lib "$site"/nvidia/cu13/lib "$site"/nvidia/cuda_runtime/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
done
