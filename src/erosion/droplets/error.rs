//! A droplet parameter out of its range: its name, what it must be, what it was.

use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
#[error("{name} must be {expected}, got {value}")]
pub struct ParamError {
    pub name: &'static str,
    pub expected: &'static str,
    pub value: String,
}
