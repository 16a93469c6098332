# Sourced on the GPU machine from the repository root, after scripts/device/pack.sh was carried along with .gl
# (Vulkan loader debs) and .carry (bundle + validation layers): installs the loader, unpacks the binaries and
# slangc, and exports what sdgen needs to find the NVIDIA driver, the layers, the compiler and the shaders.
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
mkdir -p /tmp/vl && for f in .carry/vulkan-validationlayers_*.deb; do dpkg -x "$f" /tmp/vl; done
tar -xJf .carry/bundle.tar.xz
export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d
export LD_LIBRARY_PATH=$PWD/lib:/tmp/vl/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}  # lib/: see pack.sh
if [ ! -e /usr/share/vulkan/icd.d/nvidia_icd.json ] && [ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
export SDGEN_SLANGC=$PWD/tools/slang/bin/slangc SDGEN_SHADER_DIR=$PWD/shaders SDGEN_CACHE_DIR=/tmp/sdgen-cache
# the built-in model and the CLIP vocabulary: from this copy of the tree, not the build machine's source path
export SDGEN_DATA_DIR=$PWD
