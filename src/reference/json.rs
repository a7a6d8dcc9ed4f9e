//! The fields of the JSON files vkerode writes, with their units and meanings: the
//! common ones here, each strategy's own in its folder (`Strategy::report_fields`). A
//! test holds the lists to the fields of real files: every field written is listed.

use crate::erosion::ALL_STRATEGIES;
use crate::experiment::results::columns::{DEEPEST_EROSION, DEPOSITED, ERODED, TOTAL_CHANGE};
use crate::table::Section;
use crate::terrain::metrics::Landform;
use crate::terrain::units::HEIGHT_UNIT_MEANING;

/// One field of a JSON file: its path (objects joined by `.`, arrays as `[]`).
#[derive(Clone, Copy)]
pub struct JsonField {
    pub file: &'static str,
    pub path: &'static str,
    pub unit: &'static str,
    pub meaning: &'static str,
    /// The strategy whose run.json has it, where it is one strategy's own.
    pub strategy: Option<&'static str>,
}

const fn field(
    file: &'static str,
    path: &'static str,
    unit: &'static str,
    meaning: &'static str,
) -> JsonField {
    JsonField {
        file,
        path,
        unit,
        meaning,
        strategy: None,
    }
}

/// The fields every run.json, meta.json and peak.json has; `config.*` stands for every
/// field below `config`.
const COMMON_FIELDS: &[JsonField] = &[
    field("run.json", "provenance.vkerode_version", "text", "the vkerode version that made the run"),
    field("run.json", "provenance.git_commit", "text", "the commit it was built from (-dirty with changes)"),
    field("run.json", "provenance.device", "text", "the Vulkan device, or \"CPU reference, N threads\""),
    field("run.json", "provenance.device_type", "text", "DISCRETE_GPU, INTEGRATED_GPU, CPU, ..."),
    field("run.json", "provenance.driver", "text", "the driver's name"),
    field("run.json", "provenance.driver_info", "text", "the driver's version"),
    field("run.json", "provenance.api_version", "text", "the device's Vulkan version"),
    field("run.json", "provenance.host", "text", "the machine's host name"),
    field("run.json", "provenance.started_at", "UTC, RFC 3339", "when the run began"),
    field("run.json", "engine", "text", "gpu, cpu or cpu-sequential"),
    field("run.json", "algorithm", "text", "the strategy, as the algorithm setting names it"),
    field("run.json", "terrain.source", "text", "noise or file"),
    field("run.json", "terrain.width", "cells", "the map's width"),
    field("run.json", "terrain.height", "cells", "the map's height"),
    field("run.json", "terrain.seed", "seed", "noise: the terrain's seed"),
    field("run.json", "terrain.relief", "height units", "noise: heights in [0, 1] times this"),
    field("run.json", "terrain.path", "path", "file: the heightmap read"),
    field("run.json", "terrain.missing_cells", "cells", "file: cells with no data (nodata or NaN), filled before erosion and nodata again on export"),
    field("run.json", "terrain.units.cell_size.x", "m", "file: grid spacing east-west"),
    field("run.json", "terrain.units.cell_size.y", "m", "file: grid spacing north-south"),
    field("run.json", "terrain.units.vertical_scale", "ratio", "file: vertical exaggeration applied before erosion"),
    field("run.json", "terrain.units.length_unit", "text", "file: metres, the grid's unit of length (generated terrain's is cells), which sets the channel threshold and the unit of drainage density"),
    field("run.json", "terrain.cell_size_source", "text", "file: where the cell size came from: flag, file or assumed; for a geographic CRS, an object `geodesic` instead"),
    field("run.json", "terrain.cell_size_source.geodesic.latitude_deg", "degrees", "file in degrees: the centre row's latitude, where the cell size was taken on the CRS's ellipsoid"),
    field("run.json", "terrain.cell_size_source.geodesic.x_spread", "ratio", "file in degrees: (widest - narrowest) / centre east-west spacing over the map, what one spacing per map neglects"),
    field("run.json", "terrain.georeferenced", "true/false", "file: a GeoTIFF whose georeferencing the TIFF outputs keep"),
    field("run.json", "kernel", "text", "the module(s) that ran (GPU only)"),
    field("run.json", "compiler_statistics[].executable", "text", "the driver's executable (shader stage) the statistic is of"),
    field("run.json", "compiler_statistics[].name", "text", "the statistic, under the driver's name (registers, binary size, ...)"),
    field("run.json", "compiler_statistics[].description", "text", "the driver's description of it"),
    field("run.json", "compiler_statistics[].value", "as the driver says", "its value"),
    field("run.json", "dispatches", "count", "dispatches of one run"),
    field("run.json", "submissions", "count", "GPU submissions of the timed run (split to stay under --max-submission-ms)"),
    field("run.json", "figures.time_source", "text", "gpu-timestamps, wall-clock (no timestamps) or cpu-wall-clock"),
    field("run.json", "figures.gpu_ms", "ms", "GPU time of the timed run (timestamps)"),
    field("run.json", "figures.wall_ms", "ms", "host time of the timed run, upload and read-back included"),
    field("run.json", "figures.unit", "text", "what steps counts: droplet-steps or cell-steps"),
    field("run.json", "figures.steps", "figures.unit", "work of the run (the instrumented run's count)"),
    field("run.json", "figures.steps_per_s", "figures.unit per s", "steps over the GPU time (over the wall time without timestamps)"),
    field("run.json", "ceiling.ceiling", "text", "the ceiling the rate is held against: droplet-walk or streaming-copy"),
    field("run.json", "ceiling.peak_walk_steps_per_s", "droplet-steps/s", "droplet-walk: the walk at this map size (vkerode peak)"),
    field("run.json", "ceiling.bytes_per_cell_step", "bytes", "streaming-copy: bytes a cell-step must move"),
    field("run.json", "ceiling.bandwidth_bytes_per_s", "bytes/s", "streaming-copy: those bytes times the cell-steps per second"),
    field("run.json", "ceiling.peak_copy_bytes_per_s", "bytes/s", "streaming-copy: the copy's bytes read and written per second"),
    field("run.json", "ceiling.peak_steps_per_s", "figures.unit per s", "the ceiling in the strategy's own unit: the walk's rate, or the copy's bandwidth over bytes_per_cell_step"),
    field("run.json", "ceiling.percent_of_peak", "%", "the rate over the ceiling"),
    field("run.json", "gpm", "object", "NVML GPM's counters over a window of back-to-back timed runs after the timed run (NVIDIA Hopper and newer); null elsewhere"),
    field("run.json", "landform", "object", "the landform figures before and after the run (below); null on a map past the cells they are computed for (2^24, 4096²: they take minutes a map past it), which warnings[] then says"),
    field("run.json", "gpm.sm_occupancy_percent", "%", "resident warps over the SMs' maximum, averaged over the SMs"),
    field("run.json", "gpm.sm_util_percent", "%", "time each SM had a warp, averaged over the SMs"),
    field("run.json", "gpm.integer_util_percent", "%", "time the SMs issued integer instructions"),
    field("run.json", "gpm.fp32_util_percent", "%", "time the SMs issued FP32 instructions"),
    field("run.json", "gpm.dram_bandwidth_percent", "%", "DRAM bandwidth used over its peak"),
    field("run.json", "gpm.window_ms", "ms", "wall time between GPM's two samples"),
    field("run.json", "gpm.busy_percent", "%", "GPU time of the runs over the window"),
    field("run.json", "change.total_change", TOTAL_CHANGE.1, TOTAL_CHANGE.2),
    field("run.json", "change.eroded", ERODED.1, ERODED.2),
    field("run.json", "change.deposited", DEPOSITED.1, DEPOSITED.2),
    field("run.json", "change.mean_abs_change", "height units", "mean |after - before|"),
    field("run.json", "change.changed_cells_share", "share", "cells whose height changed"),
    field("run.json", "change.deepest_erosion", DEEPEST_EROSION.1, DEEPEST_EROSION.2),
    field("run.json", "change.highest_deposition", "height units", "the most positive change of one cell"),
    field("run.json", "change.channel_mean_change", "height units", "mean change over the initial terrain's channel cells (D8, top 5% area); this and the three below need the maps' drainage and are null past the cells the landform is computed for"),
    field("run.json", "change.hillslope_mean_change", "height units", "mean change over all other cells"),
    field("run.json", "change.channel_incision_before", "height units", "channel incision of the initial terrain"),
    field("run.json", "change.channel_incision_after", "height units", "channel incision after the run (its own channels)"),
    field("run.json", "change.min_after", "height units", "the lowest height after"),
    field("run.json", "change.max_after", "height units", "the highest height after"),
    field("run.json", "warnings[]", "text", "why a figure is missing or a cache was not written"),
    field("run.json", "instrumented_run.total_change", "height units x cells", "GPU: sum of (after - before) of the instrumented run, which the strategy's own figures (its mass balance) are of"),
    field("run.json", "instrumented_run.written_total_change", "height units x cells", "GPU: the same of the timed run, whose heights are written and whose change `change` gives"),
    field("run.json", "instrumented_run.relative_difference", "ratio", "GPU: (written - instrumented) / |instrumented|: how far the two runs of one job raced apart"),
    field("run.json", "instrumented_run.cells_differing", "cells", "GPU: cells whose heights differ between the two runs"),
    field("run.json", "instrumented_run.max_cell_difference", "height units", "GPU: the largest difference of one cell between them"),
    field("run.json", "height_unit.name", "text", HEIGHT_UNIT_MEANING),
    field("run.json", "height_unit.per_kernel_unit", "height units", "one kernel height unit (the heights the strategies ran on: the cell's x spacing over the vertical scale)"),
    field("meta.json", "schema_version", "version", "the version of points.csv's columns (1 for sets that do not say)"),
    field("meta.json", "experiment", "text", "the config's name"),
    field("meta.json", "device", "text", "the (first) device"),
    field("meta.json", "device_type", "text", "its type"),
    field("meta.json", "vendor_id", "PCI id", "its vendor"),
    field("meta.json", "device_id", "PCI id", "its device id"),
    field("meta.json", "driver", "text", "its driver's name"),
    field("meta.json", "driver_version", "text", "its driver's version"),
    field("meta.json", "driver_version_raw", "number", "the driver version as Vulkan encodes it"),
    field("meta.json", "api_version", "text", "its Vulkan version"),
    field("meta.json", "subgroup_size", "invocations", "its subgroup size"),
    field("meta.json", "timestamp_period_ns", "ns per tick", "its timestamp period"),
    field("meta.json", "vkerode_version", "text", "the vkerode version of the sweep"),
    field("meta.json", "git_commit", "text", "the commit it was built from"),
    field("meta.json", "config_file", "path", "the config file"),
    field("meta.json", "config_hash", "FNV-1a hex", "the config as vkerode understood it, description aside: equal for equal experiments"),
    field("meta.json", "config.*", "as configs", "the config as read, with --set overrides applied (docs/config.md)"),
    field("meta.json", "config.input_hashes.*", "FNV-1a hex", "each input's content hash, by its path as the config wrote it (absent without inputs): part of config_hash"),
    field("meta.json", "host", "text", "the machine"),
    field("meta.json", "started_at", "UTC, RFC 3339", "when the sweep began"),
    field("meta.json", "shard", "i/n", "the shard, for a sharded sweep (null otherwise)"),
    field("meta.json", "merged_from[]", "path", "for a merged set: the folders it was merged from"),
    field("meta.json", "missing_points[]", "index", "for a set merged with --partial: the points it lacks"),
    field("meta.json", "validation", "true/false", "whether the validation layer was on (it slows every dispatch)"),
    field("meta.json", "command_line", "text", "the command that made the set"),
    field("meta.json", "clocks_policy", "text", "the GPU's clocks policy, where NVML reads it"),
    field("meta.json", "gpu_state_at_start.sm_mhz", "MHz", "NVML: SM clock when the sweep began"),
    field("meta.json", "gpu_state_at_start.memory_mhz", "MHz", "NVML: memory clock then"),
    field("meta.json", "gpu_state_at_start.temperature_c", "degrees C", "NVML: temperature then"),
    field("meta.json", "gpu_state_at_start.power_w", "W", "NVML: board power then"),
    field("meta.json", "gpu_state_at_start.throttle", "bits", "NVML: clocks-throttle-reason bits then"),
    field("meta.json", "devices[].worker", "index", "sweep --devices: the worker that drove the device"),
    field("meta.json", "devices[].index", "index", "its index in vkerode devices"),
    field("meta.json", "devices[].name", "text", "its name"),
    field("meta.json", "devices[].driver_version", "text", "its driver's version"),
    field("meta.json", "devices[].uuid", "text", "its UUID as NVML writes it"),
    field("meta.json", "replicate", "true/false", "sweep --replicate: every point ran on every device"),
    field("equivalence.json", "experiment", "text", "the plan's name: the config's, or `equivalence` for flags alone"),
    field("equivalence.json", "description", "text", "the config's description"),
    field("equivalence.json", "config_hash", "FNV-1a hex", "the plan as understood (options and configurations), description aside"),
    field("equivalence.json", "provenance.*", "as run.json's", "where the GPU runs ran: device, driver, vkerode version and commit, host, start (run.json's provenance fields)"),
    field("equivalence.json", "options.variants[]", "text", "the speed variants (docs/cli.md, `equivalence --variants`)"),
    field("equivalence.json", "options.seeds", "seeds", "droplet seeds of each variant and of the paper's kernel"),
    field("equivalence.json", "options.reference_seeds", "seeds", "droplet seeds of the sequential reference (the first of the same)"),
    field("equivalence.json", "options.first_seed", "seed", "the first droplet seed"),
    field("equivalence.json", "options.permutations", "count", "relabellings of the map test"),
    field("equivalence.json", "alpha", "p", "the level of every test, after Holm's correction"),
    field("equivalence.json", "default_margin", "share", "the margin of a figure the margins table does not list"),
    field("equivalence.json", "margins[].figure", "text", "a figure"),
    field("equivalence.json", "margins[].relative", "share", "its margin of equivalence, a share of |reference mean|, fixed in advance"),
    field("equivalence.json", "margins[].reason", "text", "why that margin"),
    field("equivalence.json", "references_run", "runs", "sequential reference runs run now"),
    field("equivalence.json", "references_cached", "runs", "sequential reference runs read from a cache"),
    field("equivalence.json", "configurations[].label", "text", "the configuration: its axes' values, or the settings flags given"),
    field("equivalence.json", "configurations[].settings.*", "as configs", "the paper's kernel's settings in it, its seed aside (docs/config.md)"),
    field("equivalence.json", "configurations[].pairs[].variant", "text", "the speed variant"),
    field("equivalence.json", "configurations[].pairs[].reference", "text", "paper (reference a) or sequential (reference b)"),
    field("equivalence.json", "configurations[].pairs[].runs_variant", "runs", "the variant's runs"),
    field("equivalence.json", "configurations[].pairs[].runs_reference", "runs", "the reference's runs"),
    field("equivalence.json", "configurations[].pairs[].verdict", "text", "equivalent, different or inconclusive (verdicts.csv's `(all)` row)"),
    field("equivalence.json", "configurations[].pairs[].equivalent_figures", "count", "figures shown equivalent"),
    field("equivalence.json", "configurations[].pairs[].different_figures", "count", "figures shown different"),
    field("equivalence.json", "configurations[].pairs[].figures[].figure", "text", "the figure (runs.csv's column)"),
    field("equivalence.json", "configurations[].pairs[].figures[].variant.n", "runs", "the variant's runs with the figure"),
    field("equivalence.json", "configurations[].pairs[].figures[].variant.mean", "the figure's unit", "their mean"),
    field("equivalence.json", "configurations[].pairs[].figures[].variant.sd", "the figure's unit", "their standard deviation (n - 1)"),
    field("equivalence.json", "configurations[].pairs[].figures[].reference.n", "runs", "the reference's runs with the figure"),
    field("equivalence.json", "configurations[].pairs[].figures[].reference.mean", "the figure's unit", "their mean"),
    field("equivalence.json", "configurations[].pairs[].figures[].reference.sd", "the figure's unit", "their standard deviation (n - 1)"),
    field("equivalence.json", "configurations[].pairs[].figures[].paired", "true/false", "whether the tests paired the runs by droplet seed (at least 2 seeds at which both sides have the figure); false: Welch's"),
    field("equivalence.json", "configurations[].pairs[].figures[].pairs", "seeds", "the seeds at which both sides have the figure: the paired tests' n"),
    field("equivalence.json", "configurations[].pairs[].figures[].difference", "the figure's unit", "the difference tested: the mean over the seed pairs of variant - reference where paired, else variant mean - reference mean"),
    field("equivalence.json", "configurations[].pairs[].figures[].relative_difference", "share", "difference / |reference mean|; null where that mean is 0"),
    field("equivalence.json", "configurations[].pairs[].figures[].interval_low", "the figure's unit", "the low end of the difference's 90% interval (TOST's at alpha 0.05, before Holm; paired or Welch's as the tests); null where no test ran"),
    field("equivalence.json", "configurations[].pairs[].figures[].interval_high", "the figure's unit", "its high end"),
    field("equivalence.json", "configurations[].pairs[].figures[].margin_relative", "share", "the figure's margin, fixed in advance"),
    field("equivalence.json", "configurations[].pairs[].figures[].margin", "the figure's unit", "margin_relative x |reference mean|"),
    field("equivalence.json", "configurations[].pairs[].figures[].df", "degrees of freedom", "pairs - 1 where paired, else Welch-Satterthwaite's (null where no test ran or the differences have no spread)"),
    field("equivalence.json", "configurations[].pairs[].figures[].p_equivalent", "p", "TOST: the larger one-sided p (paired t, else Welch's)"),
    field("equivalence.json", "configurations[].pairs[].figures[].p_equivalent_holm", "p", "after Holm across the pair's figures"),
    field("equivalence.json", "configurations[].pairs[].figures[].p_different", "p", "the two-sided p of equal means (paired t, else Welch's)"),
    field("equivalence.json", "configurations[].pairs[].figures[].p_different_holm", "p", "after Holm across the pair's figures and its map test"),
    field("equivalence.json", "configurations[].pairs[].figures[].verdict", "text", "equivalent, different or inconclusive"),
    field("equivalence.json", "configurations[].pairs[].map.width", "blocks", "the smoothed change map's width"),
    field("equivalence.json", "configurations[].pairs[].map.height", "blocks", "its height"),
    field("equivalence.json", "configurations[].pairs[].map.block", "cells", "the side of a block (the mean change of its cells)"),
    field("equivalence.json", "configurations[].pairs[].map.pairs", "seeds", "the seeds at which both sides have a map; the test is paired on them where the paired test can reach alpha (6 pairs at 0.05), else unpaired on every map"),
    field("equivalence.json", "configurations[].pairs[].map.test.statistic", "height units squared", "the mean over blocks of the squared difference of the groups' mean maps"),
    field("equivalence.json", "configurations[].pairs[].map.test.p", "p", "(1 + relabellings at least as extreme) / (1 + relabellings)"),
    field("equivalence.json", "configurations[].pairs[].map.test.permutations", "count", "relabellings"),
    field("equivalence.json", "configurations[].pairs[].map.test.paired", "true/false", "whether the labels were swapped within seed pairs (the sides share their seeds) rather than shuffled"),
    field("equivalence.json", "configurations[].pairs[].map.p_different_holm", "p", "the map test's p after Holm with the figures' difference tests"),
    field("equivalence.json", "configurations[].pairs[].map.different", "true/false", "whether the map test rejects one distribution of maps"),
    field("reference-cache/*.json", "format", "version", "the cache file's format; files of another are not read"),
    field("reference-cache/*.json", "job_key", "FNV-1a hex", "the job: its settings without the GPU-only keys, and the terrain's checksum"),
    field("reference-cache/*.json", "seed", "seed", "the droplet seed"),
    field("reference-cache/*.json", "job.*", "as configs", "the settings hashed (docs/config.md)"),
    field("reference-cache/*.json", "terrain_checksum", "FNV-1a hex", "the initial terrain's cells"),
    field("reference-cache/*.json", "provenance.*", "as run.json's", "where the reference ran (the CPU, one thread)"),
    field("reference-cache/*.json", "wall_ms", "ms", "host time of the reference run"),
    field("reference-cache/*.json", "figures[].name", "text", "a figure (runs.csv's column)"),
    field("reference-cache/*.json", "figures[].value", "the figure's unit", "its value (null where undefined)"),
    field("reference-cache/*.json", "map.width", "blocks", "the smoothed change map's width"),
    field("reference-cache/*.json", "map.height", "blocks", "its height"),
    field("reference-cache/*.json", "map.block", "cells", "the side of a block"),
    field("reference-cache/*.json", "map.values[]", "height units", "each block's mean change, row by row"),
    field("peak.json", "device", "text", "the device measured"),
    field("peak.json", "driver_info", "text", "its driver's version"),
    field("peak.json", "vkerode_commit", "text", "the commit of the vkerode that measured it"),
    field("peak.json", "walk[].map_side", "cells", "droplet-shaped walks: the map side"),
    field("peak.json", "walk[].footprint_bytes", "bytes", "the heightmap the walkers hit"),
    field("peak.json", "walk[].walkers", "count", "walkers (30 unit steps each)"),
    field("peak.json", "walk[].walk_steps_per_s", "steps/s", "walk steps per second (2x2 atomicAdd per step)"),
    field("peak.json", "walk[].atomics_per_s", "atomic adds/s", "atomicAdds per second"),
    field("peak.json", "walk[].gpu_ms", "ms", "median GPU time of a run"),
    field("peak.json", "random[].addresses", "count", "random-address atomicAdd: distinct addresses (1 is the most contended)"),
    field("peak.json", "random[].footprint_bytes", "bytes", "the buffer they fall in"),
    field("peak.json", "random[].atomics_per_s", "atomic adds/s", "atomicAdds per second"),
    field("peak.json", "random[].gpu_ms", "ms", "median GPU time of a run"),
    field("peak.json", "cache_latency[].path", "text", "the cache microbenchmark: the read path of the dependent loads"),
    field("peak.json", "cache_latency[].shared_bytes", "bytes", "shared memory the chase declared"),
    field("peak.json", "cache_latency[].working_set_bytes", "bytes", "the working set chased"),
    field(
        "peak.json",
        "cache_latency[].latency_ns",
        "ns per load",
        "dependent-load latency; null where the chase of twice the loads was not slower (below the timer's resolution)",
    ),
    field("peak.json", "cache_latency[].steps", "loads", "loads timed (the difference of two runs)"),
    field("peak.json", "cache_bandwidth[].scope", "text", "per-sm or device read bandwidth"),
    field("peak.json", "cache_bandwidth[].working_set_bytes", "bytes", "the working set reread"),
    field("peak.json", "cache_bandwidth[].bytes_per_s", "bytes/s", "bytes read per second"),
    field("peak.json", "cache_bandwidth[].workgroups", "count", "workgroups reading"),
    field("peak.json", "cache_bandwidth[].laps", "count", "passes over the working set"),
    field("peak.json", "cache_bandwidth[].gpu_ms", "ms", "GPU time"),
    field("peak.json", "copy.buffer_bytes", "bytes", "the streaming copy: bytes of each of its two buffers"),
    field("peak.json", "copy.bytes_per_s", "bytes/s", "bytes read plus bytes written per second: the grid strategies' ceiling"),
    field("peak.json", "copy.gpu_ms", "ms", "median GPU time of a copy"),
    field("peak.json", "footprint[].footprint_bytes", "bytes", "the footprint probe: random int atomicAdd over a map of this size, reached by address with 64-bit indices (256 MiB doubling to 45% of the device's memory on a GPU)"),
    field("peak.json", "footprint[].allocation", "text", "how the map's memory was allocated: pooled (gpu-allocator's blocks) or dedicated (an allocation naming the buffer); each size is measured both ways (docs/findings/allocation.md)"),
    field("peak.json", "footprint[].invocations", "count", "invocations of one run"),
    field("peak.json", "footprint[].adds_per_invocation", "count", "atomic adds of each invocation, each at a hashed cell"),
    field("peak.json", "footprint[].atomics_per_s", "atomic adds/s", "over the median GPU time"),
    field("peak.json", "footprint[].gpu_ms", "ms", "median GPU time of a run"),
];

/// The landform figures before and after, from their one list (`Landform::COLUMNS`).
fn landform_fields() -> impl Iterator<Item = JsonField> {
    let leak = |text: String| -> &'static str { Box::leak(text.into_boxed_str()) };
    ["before", "after"].into_iter().flat_map(move |when| {
        Landform::COLUMNS
            .iter()
            .map(move |&(name, unit, meaning)| JsonField {
                file: "run.json",
                path: leak(format!("landform.{when}.{name}")),
                unit,
                meaning: leak(format!("{meaning}; {when} the run")),
                strategy: None,
            })
    })
}

/// Every field: the common ones, the landform's, then each strategy's run.json fields.
pub fn json_fields() -> Vec<JsonField> {
    static FIELDS: std::sync::OnceLock<Vec<JsonField>> = std::sync::OnceLock::new();
    FIELDS.get_or_init(all_fields).clone()
}

fn all_fields() -> Vec<JsonField> {
    let own = ALL_STRATEGIES.iter().flat_map(|s| {
        s.report_fields()
            .iter()
            .map(|&(path, unit, meaning)| JsonField {
                file: "run.json",
                path,
                unit,
                meaning,
                strategy: Some(s.algorithm().as_str()),
            })
    });
    COMMON_FIELDS
        .iter()
        .map(|f| JsonField {
            strategy: None,
            ..*f
        })
        .chain(landform_fields())
        .chain(own)
        .collect()
}

/// Whether `path` (a leaf of `file`, arrays as `[]`) is listed: itself, or for a
/// null object or an empty array, the fields it holds when it is filled.
pub fn is_listed(file: &str, path: &str) -> bool {
    json_fields().iter().filter(|f| f.file == file).any(|f| {
        let below = |stem: &str| path.starts_with(&format!("{stem}."));
        f.path == path
            || f.path.strip_suffix(".*").is_some_and(below)
            || f.path.starts_with(&format!("{path}."))
            || (path.ends_with("[]") && f.path.starts_with(path))
    })
}

/// The leaf paths of a JSON value: objects joined by `.`, arrays as `[]`, empty arrays
/// and nulls as leaves.
pub fn leaf_paths(value: &serde_json::Value) -> Vec<String> {
    fn walk(value: &serde_json::Value, path: String, out: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, v) in map {
                    let next = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    walk(v, next, out);
                }
            }
            serde_json::Value::Array(items) => {
                let next = format!("{path}[]");
                let nested: Vec<_> = items
                    .iter()
                    .filter(|i| i.is_object() || i.is_array())
                    .collect();
                if nested.is_empty() {
                    out.push(next);
                } else {
                    for item in nested {
                        walk(item, next.clone(), out);
                    }
                }
            }
            _ => out.push(path),
        }
    }
    let mut out = Vec::new();
    walk(value, String::new(), &mut out);
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use crate::terrain::metrics::LANDFORM_MAX_CELLS;

    #[test]
    fn the_landform_field_names_the_bound_the_code_holds() {
        let side = (LANDFORM_MAX_CELLS as f64).sqrt() as u64;
        let bound = format!("2^{}, {side}²", LANDFORM_MAX_CELLS.trailing_zeros());
        let field = super::json_fields()
            .into_iter()
            .find(|f| f.file == "run.json" && f.path == "landform")
            .expect("run.json's landform is documented");
        assert!(field.meaning.contains(&bound), "{}", field.meaning);
    }
}
