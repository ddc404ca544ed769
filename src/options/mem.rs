//! The values of `dbio mem`'s own options, read by the option table's rows (`crate::mem`
//! checks them against the machine before anything is allocated).

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The pages behind a buffer (`--pages`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PageKind {
    /// Base pages only (transparent huge pages switched off for the buffer).
    #[serde(rename = "4k")]
    #[default]
    Base,
    /// Transparent huge pages, asked for with madvise (the kernel may still give base pages).
    #[serde(rename = "thp")]
    Thp,
    /// Reserved hugetlb pages (vm.nr_hugepages), as a database SGA uses them.
    #[serde(rename = "huge")]
    Huge,
}

impl PageKind {
    pub const ALL: [PageKind; 3] = [PageKind::Base, PageKind::Thp, PageKind::Huge];

    pub fn name(self) -> &'static str {
        match self {
            PageKind::Base => "4k",
            PageKind::Thp => "thp",
            PageKind::Huge => "huge",
        }
    }

    pub fn parse(text: &str) -> Result<PageKind, String> {
        word(&PageKind::ALL, PageKind::name, text)
    }
}

/// A part of the measurement (`--only`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Part {
    Curve,
    Numa,
    Loaded,
}

impl Part {
    pub const ALL: [Part; 3] = [Part::Curve, Part::Numa, Part::Loaded];

    pub fn name(self) -> &'static str {
        match self {
            Part::Curve => "curve",
            Part::Numa => "numa",
            Part::Loaded => "loaded",
        }
    }

    pub fn parse(text: &str) -> Result<Part, String> {
        word(&Part::ALL, Part::name, text)
    }
}

/// The one of `all` named `text`.
fn word<T: Copy>(all: &[T], name: fn(T) -> &'static str, text: &str) -> Result<T, String> {
    all.iter()
        .copied()
        .find(|w| name(*w) == text)
        .ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|w| name(*w)).collect();
            format!("'{text}'; accepted: {}", names.join(", "))
        })
}

/// `dbio mem`'s own options, as the command line gave them.
#[derive(Debug, Clone, Default)]
pub struct MemValues {
    /// `--min-size`: smallest working set of the latency curve.
    pub min_size: u64,
    /// `--max-size`: largest working set (None: the command chooses).
    pub max_size: Option<u64>,
    pub points_per_doubling: u32,
    /// `--sizes`: exactly these working sets, in the order given.
    pub sizes: Option<Vec<u64>>,
    pub budget: Duration,
    pub pages: PageKind,
    pub allow_fallback: bool,
    pub numa_size: Option<u64>,
    pub loaded_size: Option<u64>,
    pub load_threads: Option<u32>,
    /// `--only`: the parts asked for, in the order given (empty: all).
    pub only: Vec<Part>,
    pub cpu: Option<usize>,
    pub shm: Option<PathBuf>,
    pub pid: Option<u32>,
    pub topology: bool,
}
