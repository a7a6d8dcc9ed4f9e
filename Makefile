# vkerode: `make demo` erodes a terrain on the default Vulkan device; `make test` runs
# the tests on it (lavapipe, with validation, where there is no GPU). Both first install
# the system packages they need, only when missing.

CARGO ?= cargo
BIN := target/release/vkerode
APT_PACKAGES := mesa-vulkan-drivers libvulkan1 vulkan-validationlayers cmake ninja-build python3 gdal-bin
# The one-node Slurm cluster of tools/slurm/test.sh; headless Chromium for the HTML
# report's browser test (tests/report_html.rs).
TEST_PACKAGES := slurm-wlm munge chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

DEMO_SIZE ?= 512
DEMO_DROPLETS ?= 300000
DEMO_OUT ?= out/demo

.PHONY: all deps test-deps apt-install build demo test lint docs gpu-loader-debs gpu-binary clean

all: build

deps:
	@$(MAKE) --no-print-directory apt-install PACKAGES="$(APT_PACKAGES)"

test-deps: deps
	@$(MAKE) --no-print-directory apt-install PACKAGES="$(TEST_PACKAGES)"

apt-install:
	@missing=""; \
	for p in $(PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; \
	fi

build: deps
	$(CARGO) build --release

demo: build
	$(BIN) erode --size $(DEMO_SIZE) --droplets $(DEMO_DROPLETS) --out $(DEMO_OUT) --force
	$(BIN) sweep experiments/demo-workgroup.toml --out $(DEMO_OUT)/results/{experiment}/{device} --force
	$(BIN) plot $(DEMO_OUT)/results/demo-workgroup/*/points.csv --x workgroup --out $(DEMO_OUT) --name workgroup-chart --force

# Tests share target/release with the demo so shaderc is built once. Then the Slurm
# job-array script end to end on a one-node cluster (needs root, which CI has).
test: test-deps
	$(CARGO) test --release
	$(CARGO) build --release
	$(SUDO) tools/slurm/test.sh

# The generated references (docs/cli.md, config.md, results.md, experiments.md, the JSON
# schemas and the man pages in docs/man/man1/); tests/docs.rs fails when the committed
# ones fall behind the code.
docs: build
	$(BIN) docs --out docs --force

lint: deps
	$(CARGO) fmt --check
	$(CARGO) clippy --release --all-targets -- -D warnings

# For a GPU machine with a Vulkan driver but no Vulkan loader (and no network): the
# loader's Debian/Ubuntu packages, amd64, into .gl/ (git-ignored). Carry .gl there with
# target/release/vkerode and run `. tools/use-gpu-loader.sh` first (README, "On a GPU
# machine").
GPU_LOADER_PACKAGES := libvulkan1 libglvnd0 libglx0 libgl1 libegl1 libgles2 libopengl0
GPU_LOADER_LISTS := /tmp/vkerode-amd64-lists
gpu-loader-debs:
	mkdir -p .gl $(GPU_LOADER_LISTS)/partial
	apt-get -oAPT::Architecture=amd64 -oDir::State::Lists=$(GPU_LOADER_LISTS) update >/dev/null
	chmod a+rwx .gl
	cd .gl && apt-get -oAPT::Architecture=amd64 -oDir::State::Lists=$(GPU_LOADER_LISTS) download $(GPU_LOADER_PACKAGES)
	ls -1 .gl

# The release build stripped and xz-compressed (about 4 MiB against 28), to carry to a
# GPU machine whose carry limit the working tree and the binary together would pass;
# tools/use-gpu-loader.sh unpacks it there.
gpu-binary: build
	strip -o target/vkerode.stripped $(BIN)
	xz -T0 -6 -c target/vkerode.stripped > target/vkerode.xz
	rm target/vkerode.stripped
	ls -l target/vkerode.xz

clean:
	$(CARGO) clean
	rm -rf out
