//! Draws `vkerode strategies`' trajectory charts again from a dose.csv, beside it:
//! `cargo run --release --example redraw_dose -- results/strategies/lavapipe/dose.csv`
//! writes results/strategies/lavapipe/<terrain>/dose.png and .svg.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut status = ExitCode::SUCCESS;
    for csv in std::env::args().skip(1) {
        let csv = Path::new(&csv);
        let dir = csv.parent().unwrap_or(Path::new("."));
        match vkerode::studies::strategy_comparison::redraw_dose_csv(csv, dir) {
            Ok(written) => {
                for path in written {
                    println!("wrote {}", path.display());
                }
            }
            Err(e) => {
                eprintln!("error: {}: {}", csv.display(), vkerode::error_chain(&e));
                status = ExitCode::FAILURE;
            }
        }
    }
    status
}
