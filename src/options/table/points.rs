//! The options of commands made of points, each a run of its own: `--point-duration` of
//! calibrate and matrix, then each one's own.

use crate::options::parse::*;
use crate::options::points::{LargeAccess, Shape, parse_limit};
use crate::options::{Group, Opt, heading};
use crate::units;

/// An option of every point: what its rows share.
const POINTS_ROW: Opt = Opt {
    heading: heading::POINTS,
    group: Group::Points,
    ..Opt::DEFAULT
};
/// A calibration's own: what its rows share.
const CALIBRATE_ROW: Opt = Opt {
    heading: heading::CALIBRATE,
    group: Group::Calibrate,
    ..Opt::DEFAULT
};
/// A matrix's own: what its rows share.
const MATRIX_ROW: Opt = Opt {
    heading: heading::MATRIX,
    group: Group::Matrix,
    ..Opt::DEFAULT
};

pub(super) const POINTS: &[Opt] = &[
    Opt {
        name: "point-duration",
        value: Some("DURATION"),
        default: Some("10s"),
        help: "Measured window of each point (each point is a run of its own).",
        set: |a, t| {
            a.point_duration = units::parse_duration(t)?;
            Ok(())
        },
        get: |a| Some(units::duration_label(a.point_duration)),
        ..POINTS_ROW
    },
    Opt {
        name: "max-latency",
        value: Some("STAT=DURATION"),
        default: Some("p95=10ms"),
        help: "The latency the maximum IOPS must keep: STAT=DURATION, STAT one of mean, p50, p90, p95, p99 (per request), e.g. p99=2ms.",
        set: |a, t| {
            a.max_latency = parse_limit(t)?;
            Ok(())
        },
        get: |a| {
            Some(format!(
                "{}={}us",
                a.max_latency.stat.name(),
                a.max_latency.us
            ))
        },
        ..CALIBRATE_ROW
    },
    Opt {
        name: "max-outstanding",
        value: Some("N"),
        default: Some("1024"),
        help: "The most I/O requests kept outstanding while walking up (sessions × batch or depth), 1 to 65536.",
        set: |a, t| {
            a.max_outstanding = count(t, 1, 65536)? as u32;
            Ok(())
        },
        get: |a| Some(a.max_outstanding.to_string()),
        ..CALIBRATE_ROW
    },
    Opt {
        name: "matrix",
        value: Some("basic|detailed|row|col|point"),
        default: Some("basic"),
        help: "Which points: basic (small alone, then large alone), detailed (every combination), row (every small level at --large-outstanding), col (every large level at --small-outstanding), point (that one combination).",
        set: |a, t| {
            a.matrix = Shape::parse(t)?;
            Ok(())
        },
        get: |a| Some(a.matrix.name().into()),
        ..MATRIX_ROW
    },
    Opt {
        name: "small-size",
        value: Some("SIZE"),
        default: Some("8K"),
        help: "Small random read size.",
        set: |a, t| {
            a.small_size = positive_size(t)?;
            Ok(())
        },
        get: |a| Some(size_text(a.small_size)),
        ..MATRIX_ROW
    },
    Opt {
        name: "large-size",
        value: Some("SIZE"),
        default: Some("1M"),
        help: "Large I/O size.",
        set: |a, t| {
            a.large_size = positive_size(t)?;
            Ok(())
        },
        get: |a| Some(size_text(a.large_size)),
        ..MATRIX_ROW
    },
    Opt {
        name: "num-small",
        value: Some("N"),
        default: Some("32"),
        help: "Highest small outstanding count (levels 1, 2, 4, ... up to it), 1 to 1024.",
        set: |a, t| {
            a.num_small = count(t, 1, 1024)? as u32;
            Ok(())
        },
        get: |a| Some(a.num_small.to_string()),
        ..MATRIX_ROW
    },
    Opt {
        name: "num-large",
        value: Some("N"),
        default: Some("8"),
        help: "Highest large outstanding count (levels 1, 2, 4, ... up to it), 1 to 256.",
        set: |a, t| {
            a.num_large = count(t, 1, 256)? as u32;
            Ok(())
        },
        get: |a| Some(a.num_large.to_string()),
        ..MATRIX_ROW
    },
    Opt {
        name: "large-access",
        value: Some("stream|random"),
        default: Some("stream"),
        help: "Large I/O placement: sequential streams (direct path read, one per outstanding I/O) or random large reads (db file parallel read of one large block).",
        set: |a, t| {
            a.large_access = LargeAccess::parse(t)?;
            Ok(())
        },
        get: |a| Some(a.large_access.name().into()),
        ..MATRIX_ROW
    },
    Opt {
        name: "large-outstanding",
        value: Some("N"),
        default: Some("1"),
        help: "Large outstanding count for --matrix row and point.",
        set: |a, t| {
            a.large_outstanding = count(t, 0, u32::MAX as u64)? as u32;
            Ok(())
        },
        get: |a| Some(a.large_outstanding.to_string()),
        ..MATRIX_ROW
    },
    Opt {
        name: "small-outstanding",
        value: Some("N"),
        default: Some("1"),
        help: "Small outstanding count for --matrix col and point.",
        set: |a, t| {
            a.small_outstanding = count(t, 0, u32::MAX as u64)? as u32;
            Ok(())
        },
        get: |a| Some(a.small_outstanding.to_string()),
        ..MATRIX_ROW
    },
    Opt {
        name: "write-pct",
        value: Some("PERCENT"),
        default: Some("0"),
        help: "Share of each kind's outstanding I/Os that are writes, in percent (0 to 100).",
        set: |a, t| {
            a.write_pct = count(t, 0, 100)? as u32;
            Ok(())
        },
        get: |a| Some(a.write_pct.to_string()),
        ..MATRIX_ROW
    },
];
