# Source this on a GPU machine that has a Vulkan driver but no Vulkan loader, from the
# repository root, with .gl/ from `make gpu-loader-debs` carried over:
#     . tools/use-gpu-loader.sh
# It unpacks the loader packages into / (as root), and points the loader at NVIDIA's
# driver manifest where there is one. Where target/vkerode.xz (`make gpu-binary`: the
# stripped release build, xz-compressed to fit a small carry) was carried instead of
# the binary, it unpacks it to target/release/vkerode.
for deb in .gl/*.deb; do
    dpkg -x "$deb" /
done
ldconfig
if [ -f /usr/share/vulkan/icd.d/nvidia_icd.json ]; then
    export VK_DRIVER_FILES=/usr/share/vulkan/icd.d/nvidia_icd.json
fi
if [ -f target/vkerode.xz ]; then
    mkdir -p target/release
    xz -dc target/vkerode.xz > target/release/vkerode
    chmod +x target/release/vkerode
fi
