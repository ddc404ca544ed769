//! The values of the options of commands made of points: `--max-latency` of a calibration
//! and `--matrix`, `--large-access` of a matrix. Parsed as typed, like every option value.

use serde::{Deserialize, Serialize};

use super::parse::one_of;

/// The latency statistic a limit applies to (per request).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stat {
    Mean,
    P50,
    P90,
    P95,
    P99,
}

impl Stat {
    pub const ALL: [Stat; 5] = [Stat::Mean, Stat::P50, Stat::P90, Stat::P95, Stat::P99];

    pub fn name(self) -> &'static str {
        match self {
            Stat::Mean => "mean",
            Stat::P50 => "p50",
            Stat::P90 => "p90",
            Stat::P95 => "p95",
            Stat::P99 => "p99",
        }
    }
}

/// `--max-latency STAT=DURATION`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencyLimit {
    pub stat: Stat,
    pub us: f64,
}

/// Parses `p95=10ms`, `p99=500us`, `mean=5ms` (clap value parser of `--max-latency`).
pub fn parse_limit(text: &str) -> Result<LatencyLimit, String> {
    let names = Stat::ALL.map(Stat::name).join(", ");
    let Some((stat, value)) = text.split_once('=') else {
        return Err(format!(
            "expected STAT=DURATION with STAT one of {names}, e.g. p95=10ms"
        ));
    };
    let stat = Stat::ALL
        .into_iter()
        .find(|s| s.name() == stat.trim())
        .ok_or_else(|| format!("unknown statistic '{stat}': accepted are {names}"))?;
    let value = value.trim();
    let d = crate::units::parse_latency(value)?;
    let us = d.as_nanos() as f64 / 1e3;
    if us <= 0.0 {
        return Err(format!("'{value}' must be longer than 0, e.g. 10ms"));
    }
    Ok(LatencyLimit { stat, us })
}

/// Which points of the grid to run (as ORION's `-matrix`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Shape {
    Basic,
    Detailed,
    Row,
    Col,
    Point,
}

impl Shape {
    /// As typed after `--matrix`.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Basic => "basic",
            Shape::Detailed => "detailed",
            Shape::Row => "row",
            Shape::Col => "col",
            Shape::Point => "point",
        }
    }
}

/// How large I/Os are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LargeAccess {
    /// Sequential streams, one per outstanding I/O (direct path read).
    Stream,
    /// Random large reads (db file parallel read of one large block).
    Random,
}

impl LargeAccess {
    /// As typed after `--large-access`.
    pub fn name(self) -> &'static str {
        match self {
            LargeAccess::Stream => "stream",
            LargeAccess::Random => "random",
        }
    }
}

impl Shape {
    /// `--matrix`: basic, detailed, row, col, point.
    pub fn parse(text: &str) -> Result<Shape, String> {
        one_of(
            text,
            &[
                ("basic", Shape::Basic),
                ("detailed", Shape::Detailed),
                ("row", Shape::Row),
                ("col", Shape::Col),
                ("point", Shape::Point),
            ],
        )
    }
}

impl LargeAccess {
    /// `--large-access`: stream, random.
    pub fn parse(text: &str) -> Result<LargeAccess, String> {
        one_of(
            text,
            &[
                ("stream", LargeAccess::Stream),
                ("random", LargeAccess::Random),
            ],
        )
    }
}
