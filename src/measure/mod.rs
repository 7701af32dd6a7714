//! Units, statistics and fits: the arithmetic every experiment and report shares.

pub mod fit;
pub mod interval;
pub mod ranks;
pub mod rules;
pub mod stats;
pub mod units;
pub mod verdict;
