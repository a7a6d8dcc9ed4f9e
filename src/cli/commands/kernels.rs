//! `vkerode kernels`: the driver's compiler statistics of droplet kernel builds.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::Args;

use crate::cli::open_device;
use crate::cli::options::GpuArgs;
use crate::cli::print::{begin_json, print_json, print_kernels, say_wrote};
use vkerode::erosion::droplets::{
    AtomicMode, DropletSettings, DropletShader, Lever, SpawnMode, SpirvBuild,
};
use vkerode::gpu::ContextOptions;
use vkerode::probes::kernels::{kernel_statistics, kernel_variants, write_statistics_csv};
use vkerode::terrain::files::{check_output_file, Overwrite};

#[derive(Args)]
pub struct KernelsArgs {
    /// Kernels, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [DropletShader::Paper, DropletShader::Fast])]
    pub variant: Vec<DropletShader>,
    /// Workgroup sizes, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [DropletSettings::DEFAULT.workgroup])]
    pub workgroup: Vec<u32>,
    /// L1 levers, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [DropletSettings::DEFAULT.lever])]
    pub lever: Vec<Lever>,
    #[arg(long, value_enum, default_value_t = DropletSettings::DEFAULT.atomics)]
    pub atomics: AtomicMode,
    #[arg(long, value_enum, default_value_t = DropletSettings::DEFAULT.spawn)]
    pub spawn: SpawnMode,
    #[arg(long, value_enum, default_value_t = DropletSettings::DEFAULT.spirv)]
    pub spirv: SpirvBuild,
    /// Also write the statistics to this CSV file, one row per statistic.
    #[arg(long, value_name = "FILE.csv")]
    pub csv: Option<PathBuf>,
    /// Replace the --csv file if it exists (by default it is refused).
    #[arg(long, requires = "csv")]
    pub force: bool,
    /// Print the statistics as one JSON document on stdout (docs/schemas/), the other lines on stderr.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub gpu: GpuArgs,
}

impl KernelsArgs {
    /// The settings every listed build shares.
    pub fn base(&self) -> DropletSettings {
        DropletSettings {
            atomics: self.atomics,
            spawn: self.spawn,
            spirv: self.spirv,
            ..DropletSettings::DEFAULT
        }
    }
}

pub fn run(options: &ContextOptions, args: &KernelsArgs) -> Result<()> {
    begin_json(args.json);
    if let Some(path) = &args.csv {
        check_output_file(path, &[], Overwrite::forced(args.force)).context("--csv")?;
    }
    let base = args.base();
    let (variants, notes) = kernel_variants(&args.variant, &args.lever, &base);
    notes.iter().for_each(|line| note!("{line}"));
    let ctx = open_device(options)?;
    let rows = kernel_statistics(&ctx, &variants, &args.workgroup, base.scale)?;
    if args.json {
        print_json(&rows)?;
    } else {
        print_kernels(ctx.info(), &rows);
    }
    if let Some(path) = &args.csv {
        write_statistics_csv(path, &rows)?;
        say_wrote([path.clone()]);
    }
    Ok(())
}
