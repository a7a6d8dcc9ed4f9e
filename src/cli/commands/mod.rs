//! One module per command.

pub mod compare;
pub mod completions;
pub mod convert;
pub mod devices;
pub mod docs;
pub mod equivalence;
pub mod erode;
pub mod kernels;
pub mod maps;
pub mod merge;
pub mod peak;
pub mod plot;
pub mod report;
pub mod reproduce;
pub mod strategies;
pub mod sweep;
pub mod terrain;
