# Source this on a GPU machine that has a Vulkan driver but no Vulkan loader, from the
# repository root, with .gl/ from `make gpu-loader-debs` carried over:
#     . tools/use-gpu-loader.sh
# It unpacks the loader packages into / (as root), and points the loader at NVIDIA's
# driver manifest where there is one.
for deb in .gl/*.deb; do
    dpkg -x "$deb" /
done
ldconfig
if [ -f /usr/share/vulkan/icd.d/nvidia_icd.json ]; then
    export VK_DRIVER_FILES=/usr/share/vulkan/icd.d/nvidia_icd.json
fi
