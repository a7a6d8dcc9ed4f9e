//! The binary's own modules: its clap types and what it prints.

pub mod args;
pub mod report;
