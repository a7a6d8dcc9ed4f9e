//! Shared by the integration tests: a validated device, and the check that the
//! validation layer stayed silent.

#![allow(dead_code)]

use std::sync::Arc;

use vkerode::experiment::results::owner_of;
use vkerode::gpu::{Context, ContextOptions};
use vkerode::terrain::{generate_on_cpu, Heightmap, TerrainSpec};

/// The default device with the Khronos validation layer and synchronization
/// validation on. Tests need the layer: its absence is a failure, not a skip.
pub fn validated_device() -> Arc<Context> {
    let ctx = Context::new(&ContextOptions {
        validation: true,
        ..ContextOptions::default()
    })
    .unwrap_or_else(|e| panic!("cannot open a validated Vulkan device: {e}"));
    assert!(ctx.validation_messages().is_some(), "validation must be on");
    ctx
}

/// Fails the test on any validation warning or error reported so far.
pub fn assert_validation_clean(ctx: &Context) {
    let messages = ctx.validation_messages().unwrap_or_default();
    assert!(
        messages.is_empty(),
        "the validation layer reported {} message(s):\n{}",
        messages.len(),
        messages.join("\n")
    );
}

/// The paper's fixed-point scale.
pub const SCALE: f32 = 1000.0;

pub fn cpu_terrain(size: u32, seed: u32) -> Heightmap {
    generate_on_cpu(&TerrainSpec::square(size, seed)).expect("valid terrain spec")
}

/// Square CPU terrain in the kernel's fixed point.
pub fn fixed_terrain(size: u32, seed: u32) -> Vec<i32> {
    cpu_terrain(size, seed)
        .to_fixed(SCALE)
        .expect("terrain fits the fixed point")
}

/// An empty folder for one test, under cargo's scratch space.
pub fn scratch(group: &str, name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(group)
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

/// The vkerode binary with validation on and a peak cache of the tests' own.
pub fn vkerode_command(args: &[&str]) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_vkerode"));
    cmd.args(args).env("VKERODE_VALIDATE", "1").env(
        "VKERODE_CACHE_DIR",
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("peak-cache"),
    );
    cmd
}

pub fn vkerode(args: &[&str]) -> std::process::Output {
    vkerode_command(args)
        .output()
        .expect("the vkerode binary runs")
}

pub fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Every file `vkerode erode` writes with pictures on.
pub fn assert_erode_outputs(out: &std::path::Path) {
    for file in [
        "before.tif",
        "after.tif",
        "before_relief.png",
        "after_relief.png",
        "erosion.png",
        "before_after.png",
        "run.json",
    ] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
}

/// Success with the validation layer silent.
pub fn assert_clean_success(output: &std::process::Output) {
    let err = stderr(output);
    assert!(output.status.success(), "vkerode failed: {err}");
    assert!(!err.contains("validation"), "validation messages: {err}");
}

/// The paper's kernel with global spawning, at the paper's fixed-point scale.
pub fn paper_kernel(
    ctx: &Arc<Context>,
    workgroup: u32,
    atomics: vkerode::erosion::droplets::AtomicMode,
) -> vkerode::erosion::droplets::DropletKernel {
    let variant = vkerode::erosion::droplets::KernelVariant::paper(
        atomics,
        vkerode::erosion::droplets::SpawnMode::Global,
    );
    vkerode::erosion::droplets::DropletKernel::new(ctx, workgroup, SCALE, variant)
        .expect("the paper's kernel builds")
}

/// `droplets` droplets with the default parameters, spawning and a single pass.
pub fn default_job(droplets: u32, seed: u32) -> vkerode::erosion::droplets::DropletJob {
    vkerode::erosion::droplets::DropletJob {
        droplets,
        seed,
        params: vkerode::erosion::droplets::KernelParams::default(),
        spawn: vkerode::erosion::droplets::Spawn::default(),
        passes: vkerode::erosion::droplets::Passes::default(),
    }
}

/// Every droplet of an instrumented run started once, and its mass account closes:
/// intended = received + truncated, with nothing lost.
pub fn assert_runs_once_and_closes_mass(run: &vkerode::erosion::droplets::GpuRun, droplets: u64) {
    assert_eq!(run.work.expect("an instrumented run").droplets, droplets);
    let mass = run.contention.as_ref().expect("an instrumented run");
    let closes = mass.mass_intended - mass.mass_received - mass.mass_truncated;
    assert!(closes.abs() <= 1e-3 * mass.mass_intended.abs(), "{mass:?}");
}

/// For each seed, one droplet through `kernel` moves and leaves the heights and step
/// count it leaves through `reference`, bit for bit.
pub fn assert_lone_droplets_match(
    reference: &vkerode::erosion::droplets::DropletKernel,
    kernel: &vkerode::erosion::droplets::DropletKernel,
    map: &vkerode::erosion::droplets::FixedHeightfield,
    seeds: std::ops::RangeInclusive<u32>,
) {
    for seed in seeds {
        assert_lone_droplet_matches(reference, kernel, map, &default_job(1, seed));
    }
}

/// The lone droplet of `one` through `kernel` moves and leaves the heights and step
/// count it leaves through `reference`, bit for bit; the two counted runs.
pub fn assert_lone_droplet_matches(
    reference: &vkerode::erosion::droplets::DropletKernel,
    kernel: &vkerode::erosion::droplets::DropletKernel,
    map: &vkerode::erosion::droplets::FixedHeightfield,
    one: &vkerode::erosion::droplets::DropletJob,
) -> (
    vkerode::erosion::droplets::GpuRun,
    vkerode::erosion::droplets::GpuRun,
) {
    let (name, seed) = (kernel.variant().module_name(), one.seed);
    let expected = reference.run_counted(map, one, 1).unwrap();
    let got = kernel.run_counted(map, one, 1).unwrap();
    assert!(
        expected.cells != map.cells,
        "seed {seed}: the droplet moved"
    );
    assert!(
        got.cells == expected.cells,
        "{name}, seed {seed}: heights differ"
    );
    assert_eq!(got.work, expected.work, "{name}, seed {seed}: same steps");
    (expected, got)
}

/// `vkerode sweep` quietly into `root`, ready to run.
pub fn sweep_command(
    config: &std::path::Path,
    root: &std::path::Path,
    extra: &[&str],
) -> std::process::Command {
    let out = sweep_out(root);
    let mut args = vec!["sweep", config.to_str().unwrap(), "--out", &out, "--quiet"];
    args.extend_from_slice(extra);
    vkerode_command(&args)
}

/// Runs `vkerode sweep` quietly into `root`.
pub fn sweep(
    config: &std::path::Path,
    root: &std::path::Path,
    extra: &[&str],
) -> std::process::Output {
    sweep_command(config, root, extra)
        .output()
        .expect("the vkerode binary runs")
}

/// The largest difference between two heightfields, in fixed-point units.
pub fn largest_difference(a: &[i32], b: &[i32]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .max()
        .unwrap_or(0)
}

/// Runs `vkerode sweep` quietly into `root` and checks that it succeeded cleanly.
pub fn sweep_into(config: &std::path::Path, root: &std::path::Path, extra: &[&str]) {
    assert_clean_success(&sweep(config, root, extra));
}

/// `sweep --out` for results under `root` as `root/<experiment>/<device>`.
pub fn sweep_out(root: &std::path::Path) -> String {
    root.join("{experiment}/{device}")
        .to_str()
        .unwrap()
        .to_string()
}

/// `vkerode plot CSV --x X [extra...] --out DIR --name NAME --force`: the charts at
/// `chart` (DIR/NAME), .png and .svg, replaced where the test drew them before.
pub fn plot(
    csv: &std::path::Path,
    x: &str,
    chart: &std::path::Path,
    extra: &[&str],
) -> std::process::Output {
    let mut args = vec!["plot", csv.to_str().unwrap(), "--x", x];
    args.extend_from_slice(extra);
    let folder = chart.parent().unwrap().to_str().unwrap();
    let name = chart.file_name().unwrap().to_str().unwrap();
    args.extend(["--out", folder, "--name", name, "--force"]);
    vkerode(&args)
}

/// The one device folder of an experiment's results under `root`.
pub fn results_dir(root: &std::path::Path, name: &str) -> std::path::PathBuf {
    let experiment = root.join(name);
    let device = std::fs::read_dir(&experiment)
        .unwrap_or_else(|e| panic!("{}: {e}", experiment.display()))
        .next()
        .expect("one device folder")
        .unwrap();
    device.path()
}

/// Every column of another strategy's sections is empty in `row` (a row of `mine`),
/// and so are the other unit's throughput columns.
pub fn assert_only_its_own_columns_are_filled(
    row: &std::collections::BTreeMap<String, String>,
    mine: &str,
) {
    let other_unit = if mine == "droplets" {
        "cell_steps"
    } else {
        "droplet_steps"
    };
    for (column, value) in row {
        let others = owner_of(column).is_some_and(|owner| owner.as_str() != mine)
            || column.starts_with(other_unit);
        if others {
            assert_eq!(value, "", "{column} of a {mine} row");
        }
    }
    let own = row
        .iter()
        .filter(|(c, v)| owner_of(c).is_some_and(|o| o.as_str() == mine) && !v.is_empty())
        .count();
    assert!(own > 3, "a {mine} row fills its own columns");
}

/// The committed test DEM: 403 x 344 cells, no georeferencing.
pub const TEST_DEM: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/jacksboro_fault_dem.tif"
);

/// Runs a GDAL tool, which must succeed: gdal-bin is installed wherever tests run.
pub fn gdal(program: &str, args: &[&str]) -> std::process::Output {
    let out = std::process::Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} runs (gdal-bin, installed by make deps): {e}"));
    assert!(out.status.success(), "{program} {args:?}: {}", stderr(&out));
    out
}

/// What GDAL says of a file, with the check that it said it without a warning.
pub fn gdalinfo(path: &std::path::Path) -> serde_json::Value {
    let out = gdal("gdalinfo", &["-json", path.to_str().unwrap()]);
    assert!(
        stderr(&out).trim().is_empty(),
        "GDAL warns on {}: {}",
        path.display(),
        stderr(&out)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The cells of `path` as GDAL reads them (`options` for gdal_translate, e.g.
/// "-unscale"), as raw float32 written through ENVI into `dir`: not the folder of a raw
/// or r16 file, whose ESRI header ENVI's would replace.
pub fn gdal_cells(path: &std::path::Path, dir: &std::path::Path, options: &[&str]) -> Vec<u8> {
    let raw = dir.join(format!(
        "{}.envi",
        path.file_stem().unwrap().to_str().unwrap()
    ));
    let mut args = vec!["-q", "-of", "ENVI", "-ot", "Float32"];
    args.extend_from_slice(options);
    args.extend([path.to_str().unwrap(), raw.to_str().unwrap()]);
    gdal("gdal_translate", &args);
    std::fs::read(raw).unwrap()
}

/// The rows of a CSV file, each column by its header.
pub fn csv_rows(path: &std::path::Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let headers = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            headers
                .iter()
                .map(str::to_string)
                .zip(r.iter().map(str::to_string))
                .collect()
        })
        .collect()
}

/// Chromium, which `make test-deps` installs: its absence fails the test, so that a
/// machine without it cannot pass for one where the page was seen to load.
pub fn chromium() -> std::path::PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "chromium is not installed: the HTML report is tested in a real browser. \
                 `make test-deps` installs it (Debian package chromium)"
            )
        })
}

/// Headless Chromium on `page` with `args`: (stdout, the page's console lines).
pub fn browse(page: &std::path::Path, args: &[&str]) -> (String, Vec<String>) {
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let out = std::process::Command::new(chromium())
        // As root it needs --no-sandbox; a container's /dev/shm is small.
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--hide-scrollbars",
        ])
        .args(args)
        .arg(url)
        .output()
        .expect("chromium runs");
    let err = stderr(&out);
    assert!(
        out.status.success(),
        "chromium failed on {}: {err}",
        page.display()
    );
    // The page's console messages (errors, blocked loads) are logged as "CONSOLE".
    let console = err
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect();
    (String::from_utf8_lossy(&out.stdout).into_owned(), console)
}

/// In a copy of the page only (the report itself has no script and its policy forbids
/// one): a script that, once everything has loaded, writes what it found into the DOM
/// for --dump-dom to show.
pub const PROBE: &str = "<script>window.addEventListener('load', () => {\
    const images = [...document.images];\
    const probe = document.createElement('pre');\
    probe.id = 'probe';\
    probe.textContent = JSON.stringify({\
      images: images.length,\
      decoded: images.filter(i => i.complete && i.naturalWidth > 0).length,\
      svgs: document.querySelectorAll('figure > svg').length,\
      scripts: document.scripts.length,\
      title: document.title,\
      text: document.body.innerText.includes(\"document.title='pwned'\"),\
    });\
    document.body.appendChild(probe);\
  });</script>";

/// What [`PROBE`] found in a copy of `page` (its policy left out, so that the probe
/// may run), written to `copy` and opened in Chromium: images, those decoded, inline
/// charts, scripts, the title, and whether the hostile description shows as text. No
/// console message may come.
pub fn probe(page: &std::path::Path, copy: &std::path::Path) -> serde_json::Value {
    let html = std::fs::read_to_string(page).unwrap();
    let policy_start = html
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .unwrap();
    let policy_end = policy_start + html[policy_start..].find('>').unwrap() + 1;
    let probed = format!("{}{}", &html[..policy_start], &html[policy_end..])
        .replace("</body>", &format!("{PROBE}</body>"));
    std::fs::write(copy, probed).unwrap();
    let (dom, console) = browse(copy, &["--virtual-time-budget=10000", "--dump-dom"]);
    assert!(console.is_empty(), "console messages: {console:#?}");
    let found = dom
        .split_once("<pre id=\"probe\">")
        .and_then(|(_, rest)| rest.split_once("</pre>"))
        .map(|(json, _)| json.replace("&quot;", "\"").replace("&amp;", "&"))
        .unwrap_or_else(|| panic!("no probe result in the DOM: {dom}"));
    serde_json::from_str(&found).unwrap()
}

/// The committed schemas, compiled.
pub struct Schemas {
    compiled: boon::Schemas,
    compiler: boon::Compiler,
}

impl Schemas {
    pub fn new() -> Self {
        Self {
            compiled: boon::Schemas::new(),
            compiler: boon::Compiler::new(),
        }
    }

    pub fn index(&mut self, name: &str) -> boon::SchemaIndex {
        let path = std::path::Path::new("docs/schemas").join(format!("{name}.schema.json"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; run `make docs`", path.display()));
        let schema: serde_json::Value = serde_json::from_str(&text).expect("a schema is JSON");
        let location = format!("file:///schemas/{name}.schema.json");
        // Adding twice is refused: a schema already added is compiled already.
        let _ = self.compiler.add_resource(&location, schema);
        self.compiler
            .compile(&location, &mut self.compiled)
            .unwrap_or_else(|e| panic!("{}: {e:#}", path.display()))
    }

    /// The errors of `document` against the schema `name`, if any.
    pub fn errors(&mut self, name: &str, document: &serde_json::Value) -> Option<String> {
        let index = self.index(name);
        self.compiled
            .validate(document, index)
            .err()
            .map(|e| format!("{e:#}"))
    }

    pub fn assert_valid(&mut self, name: &str, what: &str, document: &serde_json::Value) {
        if let Some(errors) = self.errors(name, document) {
            panic!("{what} does not pass {name}.schema.json:\n{errors}\n{document:#}");
        }
    }

    pub fn assert_invalid(&mut self, name: &str, what: &str, document: &serde_json::Value) {
        assert!(
            self.errors(name, document).is_some(),
            "{what} passes {name}.schema.json, which should refuse it"
        );
    }
}
