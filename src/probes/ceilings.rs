//! `vkerode peak`: the device's int atomicAdd rates, for random addresses over a range
//! of footprints and for droplet-shaped walks over a range of map sizes, its streaming
//! copy bandwidth and its cache microbenchmark, cached per device so that sweeps can
//! hold each point against its strategy's ceiling ([`Ceilings`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::atomic::{AtomicProbe, CopyProbe, CopyRate, FootprintProbe};
use super::cache::{
    BandwidthPoint, CacheProbe, CacheProbeSize, ChasePath, LatencyPoint, StreamScope,
};
use super::gpu_state::GpuMonitor;
use super::ProbeError;
use crate::erosion::droplets::ATOMICS_PER_STEP;
use crate::gpu::{Context, DeviceInfo, MemoryScheme};
use crate::progress::Progress;
use crate::terrain::files::write_atomically;
use crate::terrain::output::slug;
use crate::PathIoError;

/// Walk steps per walker, as the paper's lifetime.
const WALK_STEPS: u32 = 30;

/// Work per probe, scaled to the device: a GPU gets 4M walkers and 4M x 64 random adds
/// (the sizes of the first H200 probe, results/README.md "The ceiling"); a CPU device
/// a thousandth of the time.
#[derive(Clone, Copy, Debug)]
pub struct ProbeSize {
    pub walkers: u32,
    pub invocations: u32,
    pub adds: u32,
    pub reps: u32,
}

impl ProbeSize {
    pub fn for_device(info: &DeviceInfo) -> Self {
        if info.is_cpu() {
            Self {
                walkers: 1 << 16,
                invocations: 1 << 16,
                adds: 16,
                reps: 3,
            }
        } else {
            Self {
                walkers: 1 << 22,
                invocations: 1 << 22,
                adds: 64,
                reps: 5,
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WalkPeak {
    pub map_side: u32,
    pub footprint_bytes: u64,
    pub walkers: u32,
    pub walk_steps_per_s: f64,
    pub atomics_per_s: f64,
    pub gpu_ms: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RandomPeak {
    /// Distinct addresses; one address is the most contended case.
    pub addresses: u32,
    pub footprint_bytes: u64,
    pub atomics_per_s: f64,
    pub gpu_ms: f64,
}

/// Random atomics over a map of `footprint_bytes`, its memory allocated one way.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FootprintPeak {
    pub footprint_bytes: u64,
    /// `pooled` (gpu-allocator's own blocks) or `dedicated` (one allocation naming the
    /// buffer): the schemes of `MemoryScheme`.
    pub allocation: String,
    pub invocations: u32,
    pub adds_per_invocation: u32,
    pub atomics_per_s: f64,
    pub gpu_ms: f64,
}

/// Every probe measured on one device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeakTable {
    pub device: String,
    pub driver_info: String,
    pub vkerode_commit: String,
    pub walk: Vec<WalkPeak>,
    pub random: Vec<RandomPeak>,
    /// The cache microbenchmark: load latency per read path against working set.
    #[serde(default)]
    pub cache_latency: Vec<LatencyPoint>,
    /// The cache microbenchmark: read bandwidth against working set.
    #[serde(default)]
    pub cache_bandwidth: Vec<BandwidthPoint>,
    /// A streaming copy far past the caches: the memory bandwidth ceiling of the grid
    /// kernels.
    #[serde(default)]
    pub copy: Option<CopyRate>,
    /// Random atomics against footprint to the device's memory, each size allocated
    /// both ways.
    #[serde(default)]
    pub footprint: Vec<FootprintPeak>,
}

/// Random-probe footprints: one address to 64M (256 MiB, past any L2).
pub const RANDOM_FOOTPRINTS: [u32; 8] = [1, 32, 1024, 1 << 16, 1 << 20, 1 << 22, 1 << 24, 1 << 26];
/// Adds per invocation of the footprint probe (4M invocations on a GPU): at the 0.05 G
/// atomics/s of a 32 GiB pooled map on the H100, a run takes 1.3 s.
const FOOTPRINT_ADDS: u32 = 16;

/// The footprint probe's map sizes, in bytes: on a GPU 256 MiB (gpu-allocator's
/// device block) doubling while a map stays within 45% of the largest device-local
/// heap, so that one map at a time leaves room for the rest; on a CPU device 1 MiB to
/// 64 MiB, past its caches.
pub fn footprint_sizes(info: &DeviceInfo, device_local_bytes: u64) -> Vec<u64> {
    let (first, last) = match info.is_cpu() {
        true => (1 << 20, 64 << 20),
        false => (256 << 20, device_local_bytes / 20 * 9),
    };
    std::iter::successors(Some(first), |b: &u64| b.checked_mul(2))
        .take_while(|&b| b <= last)
        .collect()
}

/// Walk-probe map sides: 4 MiB to 256 MiB heightmaps.
pub const WALK_SIDES: [u32; 4] = [1024, 2048, 4096, 8192];

impl PeakTable {
    /// Whether every rate is finite and above 0: one that is not (an edited cache)
    /// would make every point's percent of peak infinite or negative.
    pub fn rates_are_sound(&self) -> bool {
        let mut rates = (self.walk.iter())
            .flat_map(|w| [w.walk_steps_per_s, w.atomics_per_s])
            .chain(self.random.iter().map(|r| r.atomics_per_s))
            .chain(self.copy.iter().map(|c| c.bytes_per_s));
        rates.all(|r| r.is_finite() && r > 0.0)
    }

    pub fn empty(info: &DeviceInfo) -> Self {
        Self {
            device: info.name.clone(),
            driver_info: info.driver_info.clone(),
            vkerode_commit: env!("VKERODE_GIT_COMMIT").into(),
            walk: Vec::new(),
            random: Vec::new(),
            cache_latency: Vec::new(),
            cache_bandwidth: Vec::new(),
            copy: None,
            footprint: Vec::new(),
        }
    }

    /// Writes peak.json and one CSV per probe (random.csv, walk.csv,
    /// cache_latency.csv, cache_bandwidth.csv) into `dir`.
    pub fn write(&self, dir: &Path) -> Result<Vec<PathBuf>, ProbeError> {
        let json = dir.join("peak.json");
        write_atomically(&json, |out| {
            serde_json::to_writer_pretty(&mut *out, self).map_err(std::io::Error::other)
        })?;
        let mut written = vec![json];
        written.extend(write_rows(&dir.join("random.csv"), &self.random)?);
        written.extend(write_rows(&dir.join("walk.csv"), &self.walk)?);
        written.extend(write_rows(
            &dir.join("cache_latency.csv"),
            &self.cache_latency,
        )?);
        written.extend(write_rows(
            &dir.join("cache_bandwidth.csv"),
            &self.cache_bandwidth,
        )?);
        written.extend(write_rows(&dir.join("copy.csv"), self.copy.as_slice())?);
        written.extend(write_rows(&dir.join("footprint.csv"), &self.footprint)?);
        Ok(written)
    }

    pub fn walk_at(&self, side: u32) -> Option<&WalkPeak> {
        self.walk.iter().find(|w| w.map_side == side)
    }
}

/// Measures the probes that fit in the device's largest SSBO.
pub struct PeakProbe {
    probe: AtomicProbe,
    size: ProbeSize,
    max_bytes: u64,
}

impl PeakProbe {
    pub fn new(ctx: &Arc<Context>) -> Result<Self, ProbeError> {
        let info = ctx.info();
        Ok(Self {
            probe: AtomicProbe::new(ctx, 256.min(info.max_workgroup_x()))?,
            size: ProbeSize::for_device(info),
            max_bytes: info.max_storage_buffer_range,
        })
    }

    pub fn fits(&self, cells: u64) -> bool {
        cells * 4 <= self.max_bytes
    }

    pub fn walk(&self, side: u32) -> Result<WalkPeak, ProbeError> {
        let s = self.size;
        let rate = self.probe.walk(side, s.walkers, WALK_STEPS, s.reps)?;
        Ok(WalkPeak {
            map_side: side,
            footprint_bytes: u64::from(side).pow(2) * 4,
            walkers: s.walkers,
            walk_steps_per_s: rate.atomics_per_s / ATOMICS_PER_STEP as f64,
            atomics_per_s: rate.atomics_per_s,
            gpu_ms: rate.gpu_ms,
        })
    }

    pub fn random(&self, addresses: u32) -> Result<RandomPeak, ProbeError> {
        let s = self.size;
        let rate = self
            .probe
            .random(addresses, s.invocations, s.adds, s.reps)?;
        Ok(RandomPeak {
            addresses,
            footprint_bytes: u64::from(addresses) * 4,
            atomics_per_s: rate.atomics_per_s,
            gpu_ms: rate.gpu_ms,
        })
    }
}

/// A CSV with a header from the rows' field names, unless there are no rows; the
/// device and driver are in peak.json beside it.
fn write_rows<T: Serialize>(path: &Path, rows: &[T]) -> Result<Option<PathBuf>, ProbeError> {
    if rows.is_empty() {
        return Ok(None);
    }
    write_atomically(path, |out| {
        let mut csv = csv::Writer::from_writer(out);
        for row in rows {
            csv.serialize(row).map_err(std::io::Error::other)?;
        }
        csv.flush()
    })?;
    Ok(Some(path.to_path_buf()))
}

/// The streaming copy: 1 GiB buffers on a GPU, 16 MiB on a CPU device, both far past
/// their caches.
pub fn measure_copy(ctx: &Arc<Context>) -> Result<CopyRate, ProbeError> {
    let (bytes, groups, reps) = if ctx.info().is_cpu() {
        (16 << 20, 64, 3)
    } else {
        (1 << 30, 8192, 10)
    };
    CopyProbe::new(ctx)?.measure(bytes, groups, reps)
}

/// The working sets of the device's cache microbenchmark.
fn cache_working_sets(info: &DeviceInfo) -> Vec<u64> {
    CacheProbeSize::for_device(info.is_cpu()).working_sets(info.max_storage_buffer_range)
}

/// The cache microbenchmark over every working set the device's SSBOs can hold,
/// `progress` told after each set is measured. A latency under `shortest_ns` (one
/// clock cycle: [`shortest_latency`]) is left unresolved: no load is that fast.
pub fn measure_cache(
    ctx: &Arc<Context>,
    shortest_ns: f64,
    mut progress: impl FnMut(u64),
) -> Result<(Vec<LatencyPoint>, Vec<BandwidthPoint>), ProbeError> {
    let info = ctx.info();
    let probe = CacheProbe::new(ctx, CacheProbeSize::for_device(info.is_cpu()))?;
    let mut latency = Vec::new();
    let mut bandwidth = Vec::new();
    for bytes in cache_working_sets(info) {
        latency.extend(probe.latency(bytes)?.into_iter().map(|mut point| {
            point.latency_ns = point.latency_ns.filter(|&ns| ns >= shortest_ns);
            point
        }));
        for scope in [StreamScope::PerSm, StreamScope::Device] {
            bandwidth.extend(probe.bandwidth(bytes, scope)?);
        }
        progress(bytes);
    }
    Ok((latency, bandwidth))
}

/// The shortest latency a load can have on the device, in ns, and where it comes from:
/// one cycle of its fastest SM clock where NVML knows it, else one tick of its
/// timestamps (what the timer cannot resolve below).
pub fn shortest_latency(info: &DeviceInfo) -> (f64, String) {
    match GpuMonitor::for_device(info).and_then(|m| m.max_sm_mhz()) {
        Some(mhz) if mhz > 0 => (
            1e3 / f64::from(mhz),
            format!("one cycle of the {mhz} MHz SM clock"),
        ),
        _ => (
            f64::from(info.timestamp_period_ns),
            "one timestamp tick".into(),
        ),
    }
}

/// Tells what one `vkerode peak` does: a line of its report, or that `done` of its
/// `total` probes are measured.
struct Teller<'t> {
    tell: &'t mut dyn FnMut(Progress),
    done: usize,
    total: usize,
}

impl Teller<'_> {
    fn line(&mut self, line: String) {
        (self.tell)(Progress::Line(line));
    }

    /// One more probe measured.
    fn step(&mut self) {
        self.done += 1;
        (self.tell)(Progress::Done {
            done: self.done,
            total: self.total,
        });
    }
}

/// The cache microbenchmark as a table: one row per working set, the latency of each
/// read path ("-" where none was measured or resolved), then the per-SM (per core on a
/// CPU device, `on_cpu`) and device read bandwidth.
pub fn cache_report(
    latency: &[LatencyPoint],
    bandwidth: &[BandwidthPoint],
    on_cpu: bool,
) -> Vec<String> {
    let paths: Vec<ChasePath> = ChasePath::ALL
        .into_iter()
        .filter(|p| latency.iter().any(|l| l.path == *p))
        .collect();
    let width = paths.iter().map(|p| p.label().len() + 2).max().unwrap_or(8);
    let mut sets: Vec<u64> = latency.iter().map(|l| l.working_set_bytes).collect();
    sets.dedup();
    let mut lines = vec![
        "dependent-load latency in ns per load, by read path, and read bandwidth in GB/s, against working set:".to_string(),
        format!(
            "  {:>12}{}{:>14}{:>14}",
            "working set",
            paths
                .iter()
                .map(|p| format!("{:>width$}", p.label()))
                .collect::<String>(),
            if on_cpu { "GB/s per core" } else { "GB/s per SM" },
            "GB/s device"
        ),
    ];
    for set in sets {
        let latencies: String = paths
            .iter()
            .map(|p| {
                latency
                    .iter()
                    .find(|l| l.path == *p && l.working_set_bytes == set)
                    .and_then(|l| l.latency_ns)
                    .map_or_else(
                        || format!("{:>width$}", "-"),
                        |ns| format!("{ns:>width$.1}"),
                    )
            })
            .collect();
        let rate = |scope| {
            bandwidth
                .iter()
                .find(|b| b.scope == scope && b.working_set_bytes == set)
                .map_or_else(
                    || format!("{:>14}", "-"),
                    |b| format!("{:>14.1}", b.bytes_per_s / 1e9),
                )
        };
        lines.push(format!(
            "  {:>12}{latencies}{}{}",
            human_bytes(set),
            rate(StreamScope::PerSm),
            rate(StreamScope::Device)
        ));
    }
    lines
}

fn human_bytes(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 => format!("{} MiB", b >> 20),
        b => format!("{} KiB", b >> 10),
    }
}

/// `vkerode peak`: the random-address and droplet-shaped walk probes (unless
/// `cache_only`, which keeps the cached ones), then the cache microbenchmark; each
/// line of the report goes to `say` as it is measured. The table is cached for
/// sweeps' percent-of-peak, and returned with where it was cached, or why it was not.
pub fn measure_peaks(
    ctx: &Arc<Context>,
    cache_only: bool,
    mut tell: impl FnMut(Progress),
) -> Result<(PeakTable, Result<PathBuf, ProbeError>), ProbeError> {
    let info = ctx.info();
    let footprints = footprint_sizes(info, ctx.device_local_bytes());
    let atomic_probes = match cache_only {
        true => 0,
        false => RANDOM_FOOTPRINTS.len() + WALK_SIDES.len() + footprints.len(),
    };
    let mut teller = Teller {
        tell: &mut tell,
        done: 0,
        total: atomic_probes + 1 + cache_working_sets(info).len(),
    };
    let mut table = if cache_only {
        load_cached(info).unwrap_or_else(|| PeakTable::empty(info))
    } else {
        let mut table = atomic_peaks(ctx, &mut teller)?;
        table.footprint = footprint_peaks(ctx, &footprints, &mut teller)?;
        table
    };
    let copy = measure_copy(ctx)?;
    teller.line(format!(
        "streaming copy of {} MiB: {:.1} GB/s read + written (the grid kernels' bandwidth ceiling)",
        copy.buffer_bytes >> 20,
        copy.bytes_per_s / 1e9
    ));
    teller.step();
    table.copy = Some(copy);
    let (shortest_ns, clock) = shortest_latency(info);
    let (latency, bandwidth) = measure_cache(ctx, shortest_ns, |_| teller.step())?;
    cache_report(&latency, &bandwidth, info.is_cpu())
        .into_iter()
        .for_each(|line| teller.line(line));
    teller.line(format!(
        "  (-: unresolved: the longer chase was not slower, or came out under {clock} ({shortest_ns:.2} ns), faster than any load)"
    ));
    table.cache_latency = latency;
    table.cache_bandwidth = bandwidth;
    // The measurements stand without the cache: one that cannot be written is said so.
    let cached = save_cached(info, &table);
    Ok((table, cached))
}

fn atomic_peaks(ctx: &Arc<Context>, teller: &mut Teller) -> Result<PeakTable, ProbeError> {
    let probe = PeakProbe::new(ctx)?;
    let mut table = PeakTable::empty(ctx.info());
    teller.line("random-address atomicAdd (int):".into());
    teller.line(format!(
        "  {:>12} {:>14} {:>14}",
        "addresses", "footprint", "G atomics/s"
    ));
    for addresses in RANDOM_FOOTPRINTS {
        if !probe.fits(u64::from(addresses)) {
            teller.line(format!(
                "  {addresses:>12}   does not fit this device's maxStorageBufferRange"
            ));
            teller.step();
            continue;
        }
        let r = probe.random(addresses)?;
        teller.step();
        teller.line(format!(
            "  {:>12} {:>11} KiB {:>14.2}",
            addresses,
            r.footprint_bytes / 1024,
            r.atomics_per_s / 1e9
        ));
        table.random.push(r);
    }
    teller.line("droplet-shaped walks (30 unit steps, 2x2 atomicAdd per step):".into());
    teller.line(format!(
        "  {:>8} {:>12} {:>16} {:>14}",
        "map", "footprint", "G walk-steps/s", "G atomics/s"
    ));
    for side in WALK_SIDES {
        if !probe.fits(u64::from(side).pow(2)) {
            teller.line(format!(
                "  {side:>8}   does not fit this device's maxStorageBufferRange"
            ));
            teller.step();
            continue;
        }
        let w = probe.walk(side)?;
        teller.step();
        teller.line(format!(
            "  {:>8} {:>8} MiB {:>16.2} {:>14.2}",
            format!("{side}²"),
            w.footprint_bytes >> 20,
            w.walk_steps_per_s / 1e9,
            w.atomics_per_s / 1e9
        ));
        table.walk.push(w);
    }
    Ok(table)
}

/// Random atomics against footprint, each size allocated pooled then dedicated.
fn footprint_peaks(
    ctx: &Arc<Context>,
    sizes: &[u64],
    teller: &mut Teller,
) -> Result<Vec<FootprintPeak>, ProbeError> {
    if !ctx.info().buffer_device_address {
        teller.line("footprint probe: skipped, the device has no bufferDeviceAddress".into());
        return Ok(Vec::new());
    }
    let probe = FootprintProbe::new(ctx)?;
    let size = ProbeSize::for_device(ctx.info());
    teller.line(format!(
        "random-address atomicAdd (int) against footprint, by allocation ({FOOTPRINT_ADDS} adds per invocation, 64-bit indices):"
    ));
    teller.line(format!(
        "  {:>12} {:>16} {:>16} {:>18}",
        "map", "pooled G/s", "dedicated G/s", "dedicated/pooled"
    ));
    let mut rows = Vec::new();
    for &bytes in sizes {
        let mut rates = [0.0; 2];
        for (rate, scheme) in rates
            .iter_mut()
            .zip([MemoryScheme::Pooled, MemoryScheme::Dedicated])
        {
            let (measured, dedicated) = probe.measure(
                bytes / 4,
                scheme,
                size.invocations,
                FOOTPRINT_ADDS,
                size.reps,
            )?;
            *rate = measured.atomics_per_s;
            rows.push(FootprintPeak {
                footprint_bytes: bytes,
                allocation: match dedicated {
                    true => "dedicated",
                    false => "pooled",
                }
                .into(),
                invocations: size.invocations,
                adds_per_invocation: FOOTPRINT_ADDS,
                atomics_per_s: measured.atomics_per_s,
                gpu_ms: measured.gpu_ms,
            });
        }
        teller.step();
        teller.line(format!(
            "  {:>12} {:>16.2} {:>16.2} {:>18.2}",
            human_bytes(bytes),
            rates[0] / 1e9,
            rates[1] / 1e9,
            rates[1] / rates[0]
        ));
    }
    Ok(rows)
}

/// Where a device's peak table is cached: `$VKERODE_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/vkerode`, else `~/.cache/vkerode`.
pub fn cache_path(info: &DeviceInfo) -> PathBuf {
    let driver = slug(&info.driver_info);
    vkerode_cache_dir().join(format!("peak-{}-{driver}.json", slug(&info.name)))
}

/// vkerode's cache folder, of the peak tables and the pipeline caches:
/// `$VKERODE_CACHE_DIR`, else `$XDG_CACHE_HOME/vkerode`, else `~/.cache/vkerode`.
pub fn vkerode_cache_dir() -> PathBuf {
    cache_dir(|name| std::env::var_os(name))
}

/// The cache folder from the variables `var` reads. An empty variable counts as unset
/// (as XDG's do): `VKERODE_CACHE_DIR=` would otherwise cache into the current folder.
fn cache_dir(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> PathBuf {
    let set = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    set("VKERODE_CACHE_DIR")
        .or_else(|| set("XDG_CACHE_HOME").map(|d| d.join("vkerode")))
        .or_else(|| set("HOME").map(|d| d.join(".cache/vkerode")))
        .unwrap_or_else(|| PathBuf::from(".vkerode-cache"))
}

/// The cached table of this device and driver, if there is a readable one.
pub fn load_cached(info: &DeviceInfo) -> Option<PeakTable> {
    let text = crate::read_input_text(&cache_path(info)).ok()?;
    let table: PeakTable = serde_json::from_str(&text).ok()?;
    table.rates_are_sound().then_some(table)
}

pub fn save_cached(info: &DeviceInfo, table: &PeakTable) -> Result<PathBuf, ProbeError> {
    let path = cache_path(info);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(PathIoError::at(dir))?;
    }
    write_atomically(&path, |out| {
        serde_json::to_writer_pretty(&mut *out, table).map_err(std::io::Error::other)
    })?;
    Ok(path)
}

/// The ceilings a sweep's points are held against, from the cache or measured now (and
/// cached): the droplet-shaped walk rate at a map side, and the streaming copy's
/// bandwidth for the grid.
pub struct Ceilings {
    ctx: Arc<Context>,
    table: PeakTable,
    probe: Option<PeakProbe>,
    /// Why the cache could not be written, once: the sweep goes on without it.
    pub warning: Option<String>,
    warned: bool,
}

impl Ceilings {
    pub fn new(ctx: &Arc<Context>) -> Self {
        let info = ctx.info();
        Self {
            ctx: Arc::clone(ctx),
            table: load_cached(info).unwrap_or_else(|| PeakTable::empty(info)),
            probe: None,
            warning: None,
            warned: false,
        }
    }

    /// Droplet-shaped walk steps per second at a map side; `None` where the map does
    /// not fit the device.
    pub fn walk(&mut self, side: u32) -> Result<Option<f64>, ProbeError> {
        if let Some(w) = self.table.walk_at(side) {
            return Ok(Some(w.walk_steps_per_s));
        }
        if self.probe.is_none() {
            self.probe = Some(PeakProbe::new(&self.ctx)?);
        }
        let probe = self.probe.as_ref().expect("probe was just made");
        if !probe.fits(u64::from(side).pow(2)) {
            return Ok(None);
        }
        let peak = probe.walk(side)?;
        let rate = peak.walk_steps_per_s;
        self.table.walk.push(peak);
        self.table.walk.sort_by_key(|w| w.map_side);
        self.save();
        Ok(Some(rate))
    }

    /// The memory bandwidth ceiling: the streaming copy's bytes read and written per
    /// second.
    pub fn copy(&mut self) -> Result<f64, ProbeError> {
        if let Some(copy) = self.table.copy {
            return Ok(copy.bytes_per_s);
        }
        let copy = measure_copy(&self.ctx)?;
        self.table.copy = Some(copy);
        self.save();
        Ok(copy.bytes_per_s)
    }

    fn save(&mut self) {
        if let Err(e) = save_cached(self.ctx.info(), &self.table) {
            if !self.warned {
                self.warned = true;
                self.warning = Some(format!(
                    "cannot cache the ceilings ({}); they are measured again next run",
                    crate::error_chain(&e)
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cached_rate_of_0_or_below_or_not_finite_is_not_trusted() {
        let with_rate = |atomics_per_s| PeakTable {
            device: "d".into(),
            driver_info: "v".into(),
            vkerode_commit: "c".into(),
            walk: Vec::new(),
            random: vec![RandomPeak {
                addresses: 1,
                footprint_bytes: 4,
                atomics_per_s,
                gpu_ms: 1.0,
            }],
            cache_latency: Vec::new(),
            cache_bandwidth: Vec::new(),
            copy: None,
            footprint: Vec::new(),
        };
        assert!(with_rate(1e9).rates_are_sound());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(!with_rate(bad).rates_are_sound(), "{bad}");
        }
    }

    #[test]
    fn an_unresolved_latency_prints_as_a_dash_and_a_cpu_has_cores_not_sms() {
        use crate::probes::cache::{ChasePath, LatencyPoint};
        let point = |latency_ns| LatencyPoint {
            path: ChasePath::Ssbo,
            shared_bytes: 0,
            working_set_bytes: 128 << 10,
            latency_ns,
            steps: 1000,
        };
        let lines = cache_report(&[point(None)], &[], true);
        assert!(lines[1].contains("GB/s per core"), "{lines:?}");
        assert!(
            lines[2].trim_end().ends_with('-') && !lines[2].contains("0.0"),
            "{lines:?}"
        );
        let lines = cache_report(&[point(Some(12.5))], &[], false);
        assert!(
            lines[1].contains("GB/s per SM") && lines[2].contains("12.5"),
            "{lines:?}"
        );
    }

    /// The variables `pairs` sets, as `std::env::var_os` would read them.
    fn vars<'a>(
        pairs: &'a [(&'a str, &'a str)],
    ) -> impl Fn(&str) -> Option<std::ffi::OsString> + 'a {
        move |name| Some(pairs.iter().find(|(n, _)| *n == name)?.1.into())
    }

    #[test]
    fn an_empty_cache_variable_counts_as_unset() {
        let home = [
            ("VKERODE_CACHE_DIR", ""),
            ("XDG_CACHE_HOME", ""),
            ("HOME", "/h"),
        ];
        assert_eq!(cache_dir(vars(&home)), PathBuf::from("/h/.cache/vkerode"));
        let xdg = [("VKERODE_CACHE_DIR", ""), ("XDG_CACHE_HOME", "/x")];
        assert_eq!(cache_dir(vars(&xdg)), PathBuf::from("/x/vkerode"));
        let own = [("VKERODE_CACHE_DIR", "/c"), ("HOME", "/h")];
        assert_eq!(cache_dir(vars(&own)), PathBuf::from("/c"));
    }
}
