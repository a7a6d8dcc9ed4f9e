//! `vkerode kernels`: the driver's compiler statistics of droplet kernel builds.

use anyhow::{Context as _, Result};

use crate::cli::args::KernelsArgs;
use crate::cli::open_device;
use crate::cli::print::{begin_json, print_json, print_kernels, say_wrote};
use vkerode::gpu::ContextOptions;
use vkerode::probes::kernels::{kernel_statistics, kernel_variants, write_statistics_csv};
use vkerode::terrain::files::{check_output_file, Overwrite};

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
