//! `dbio size PLAN.toml`: from the database's requirements to devices and arrays — seed
//! 003's design method as a command.
//!
//! 1. the requirements per I/O class, as the database sees them (the plan's
//!    `[requirements]`);
//! 2. the device's capabilities within the latency limits: stated in the plan, or measured
//!    (`runs = [ids]`, `--runs`): the requirements' job run with `--span` at several active
//!    surfaces ([`measured`]);
//! 3. the arithmetic: devices for IOPS (with the RAID write penalty), for bandwidth and for
//!    capacity at the usable surface, the binding one, spares and arrays ([`arith`]), with
//!    the capacity-first answer beside it.
//!
//! [`plan`] reads the plan, [`arith`] computes, [`render`] prints; the report is computed
//! once ([`SizeReport`]) and printed as text or JSON.

pub mod arith;
pub mod measured;
pub mod plan;
pub mod report;

use crate::units::Shown;
use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;

use crate::error::{Error, ExitCode, Result};
use crate::store::Store;
use arith::{Array, Device, Inputs, Load, Sizing};
use measured::Measured;
use plan::SizingPlan;

pub const SCHEMA: &str = "dbio.size.v1";

/// `dbio size`.
#[derive(Debug, Clone, Args)]
pub struct SizeArgs {
    /// The sizing plan (TOML): [requirements] with [[requirements.class]], [device], [array].
    #[arg(value_name = "PLAN.toml")]
    pub plan: PathBuf,
    /// The options of the table it takes: `--runs` (the device's figures from recorded
    /// runs instead of the plan's), `--json` (the sizing as JSON), `--format`.
    #[command(flatten)]
    pub options: crate::options::cli::SizeOptions,
}

/// One requirement class as the report shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ClassJson {
    pub name: String,
    pub event: String,
    /// "read" or "write".
    pub direction: &'static str,
    pub size_bytes: u64,
    pub peak_iops: f64,
    pub peak_mib_per_s: f64,
    /// Latency limits in ms, e.g. {"p99": 30}.
    pub limits_ms: std::collections::BTreeMap<String, f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RequirementsJson {
    pub capacity_bytes: u64,
    pub growth: f64,
    /// The classes' peaks added up (today).
    pub peak: Load,
    pub classes: Vec<ClassJson>,
}

/// The device and where its figures came from.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceJson {
    pub name: String,
    pub capacity_bytes: u64,
    pub raid: String,
    pub write_penalty: f64,
    pub data_fraction: f64,
    pub devices_per_group: u64,
    /// Device I/Os and MiB per second within the limits.
    pub iops: f64,
    pub mib_per_s: f64,
    pub usable_surface: f64,
    /// "plan" (stated) or "runs" (measured).
    pub source: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured: Option<Measured>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ArrayJson {
    pub name: String,
    pub max_mib_per_s: f64,
    pub max_devices: u64,
    pub spares: f64,
}

/// The sizing, computed once: printed as text or as JSON (schema `dbio.size.v1`).
#[derive(Debug, Clone, Serialize)]
pub struct SizeReport {
    pub schema: &'static str,
    pub dbio_version: &'static str,
    pub plan: String,
    pub requirements: RequirementsJson,
    pub device: DeviceJson,
    pub array: ArrayJson,
    /// `needs`, `devices`, `binding`, `arrays`, `iops_per_gib`, `capacity_first`.
    #[serde(flatten)]
    pub sizing: Sizing,
    /// Notes on how the figures were taken.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// `dbio size`: exit 0 with the sizing, 2 for a bad plan or runs that cannot be used.
pub fn size(a: &SizeArgs, db: Option<&Path>) -> Result<ExitCode> {
    let plan = plan::load(&a.plan)?;
    let report = report(&plan, &a.options.0.runs, db)?;
    crate::report::Output::new(a.options.0.json, a.options.0.format)
        .emit(&report::report(&report), &report)?;
    Ok(ExitCode::Ok)
}

/// The device's capabilities: measured by runs (`--runs`, else `device.runs`), or stated.
fn device_figures(
    plan: &SizingPlan,
    cli_runs: &[i64],
    db: Option<&Path>,
    notes: &mut Vec<String>,
) -> Result<(f64, f64, f64, Option<Measured>)> {
    let d = &plan.device;
    let (ids, origin) = if !cli_runs.is_empty() {
        let stated: Vec<&str> = [
            ("device.iops", d.iops.is_some()),
            ("device.mib_per_s", d.mib_per_s.is_some()),
            ("device.usable_surface", d.usable_surface.is_some()),
            ("device.runs", d.runs.is_some()),
        ]
        .iter()
        .filter(|(_, given)| *given)
        .map(|(k, _)| *k)
        .collect();
        if !stated.is_empty() {
            notes.push(format!("--runs replaces the plan's {}", stated.join(", ")));
        }
        (cli_runs.to_vec(), "--runs".to_string())
    } else if let Some(r) = &d.runs {
        (r.value.clone(), format!("{}: device.runs", r.at))
    } else {
        let missing = |key: &str, why: &str| plan::missing(&d.at, key, why);
        let iops = d.iops.as_ref().ok_or_else(|| {
            missing(
                "device.iops",
                "the IOPS constraint needs each device's IOPS within the latency limits (or device.runs = [ids] of measured runs)",
            )
        })?;
        let mib = d.mib_per_s.as_ref().ok_or_else(|| {
            missing(
                "device.mib_per_s",
                "the bandwidth constraint needs each device's MiB/s within the latency limits (or device.runs = [ids] of measured runs)",
            )
        })?;
        let surface = d.usable_surface.as_ref().map_or(1.0, |s| s.value);
        return Ok((iops.value, mib.value, surface, None));
    };
    let path = match db {
        Some(p) => p.to_path_buf(),
        None => crate::store::default_path()?,
    };
    let store = Store::open_existing(&path)?;
    let mut runs = Vec::with_capacity(ids.len());
    for id in &ids {
        let r = store.run(*id)?.ok_or_else(|| {
            Error::usage(format!(
                "{origin}: no run {id} in the results store {}; `dbio runs` lists the recorded runs",
                path.shown()
            ))
        })?;
        runs.push((*id, r.result));
    }
    let m = measured::measure(&runs, &plan.classes, d.runs_raid, d.runs_devices)
        .map_err(|why| Error::usage(format!("{origin}: {why}")))?;
    Ok((m.iops, m.mib_per_s, m.usable_surface, Some(m)))
}

/// Computes the sizing of `plan` (with measured runs `cli_runs`, if any).
pub fn report(plan: &SizingPlan, cli_runs: &[i64], db: Option<&Path>) -> Result<SizeReport> {
    let mut notes = Vec::new();
    let (iops, mib_per_s, usable_surface, measured) =
        device_figures(plan, cli_runs, db, &mut notes)?;
    let mut peak = Load::default();
    let mut classes = Vec::with_capacity(plan.classes.len());
    for c in &plan.classes {
        let read = c.event.reads();
        if read {
            peak.read_iops += c.peak_iops;
            peak.read_mib_per_s += c.peak_mib_per_s;
        } else {
            peak.write_iops += c.peak_iops;
            peak.write_mib_per_s += c.peak_mib_per_s;
        }
        classes.push(ClassJson {
            name: c.name.clone(),
            event: c.event.name().to_string(),
            direction: if read { "read" } else { "write" },
            size_bytes: c.size_bytes,
            peak_iops: c.peak_iops,
            peak_mib_per_s: c.peak_mib_per_s,
            limits_ms: c
                .limits
                .iter()
                .map(|(s, d)| (s.to_string(), d.as_secs_f64() * 1e3))
                .collect(),
        });
    }
    let d = &plan.device;
    let device = Device {
        capacity_bytes: d.capacity_bytes,
        raid: d.raid,
        iops,
        mib_per_s,
        usable_surface,
    };
    let array = Array {
        max_mib_per_s: plan.array.max_mib_per_s,
        max_devices: plan.array.max_devices,
        spares: plan.array.spares,
    };
    let sizing = arith::size(&Inputs {
        load: peak,
        growth: plan.growth,
        capacity_bytes: plan.capacity_bytes,
        device,
        array,
    })
    .map_err(|e| Error::usage(format!("{}: {e}", plan.origin)))?;
    Ok(SizeReport {
        schema: SCHEMA,
        dbio_version: env!("CARGO_PKG_VERSION"),
        plan: plan.origin.clone(),
        requirements: RequirementsJson {
            capacity_bytes: plan.capacity_bytes,
            growth: plan.growth,
            peak,
            classes,
        },
        device: DeviceJson {
            name: d.name.clone(),
            capacity_bytes: d.capacity_bytes,
            raid: d.raid.label(),
            write_penalty: d.raid.write_penalty(),
            data_fraction: d.raid.data_fraction(),
            devices_per_group: d.raid.group(),
            iops,
            mib_per_s,
            usable_surface,
            source: if measured.is_some() { "runs" } else { "plan" },
            measured,
        },
        array: ArrayJson {
            name: plan.array.name.clone(),
            max_mib_per_s: plan.array.max_mib_per_s,
            max_devices: plan.array.max_devices,
            spares: plan.array.spares,
        },
        sizing,
        notes,
    })
}
