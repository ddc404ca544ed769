//! The arithmetic of the sizing method (docs/sizing.md), as pure functions: from the database's load and
//! capacity to devices (for IOPS, for bandwidth, for capacity — the largest binds), spares
//! and arrays, and the capacity-first answer beside it.
//!
//! - **IOPS**: back-end IOPS = (read IOPS + write IOPS × the RAID write penalty) × growth;
//!   devices = back-end IOPS / IOPS per device.
//! - **Bandwidth**: back-end MiB/s = (read MiB/s + write MiB/s / the RAID data fraction) ×
//!   growth — every byte a mirror writes goes to two devices, a RAID 5 of 5 devices writes
//!   5/4 of the data (large writes are taken as full-stripe writes; the read-modify-write
//!   of small writes is the IOPS constraint's business); devices = back-end MiB/s / MiB/s
//!   per device.
//! - **Capacity**: devices = capacity / (device capacity × usable surface × data fraction).
//! - The binding constraint's count is rounded up to whole RAID groups; spares (a
//!   percentage of it, rounded up) come on top.
//! - **Arrays**: the most of host MiB/s / array MiB/s (an array's bandwidth is what its
//!   front end delivers to hosts) and devices with spares / devices per array.

use serde::Serialize;

/// A RAID level: how many device I/Os a host write costs, and how much of a device holds data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "level")]
pub enum Raid {
    None,
    Raid1,
    Raid10,
    /// `group` devices per RAID group, one of them parity.
    Raid5 {
        group: u32,
    },
    /// `group` devices per RAID group, two of them parity.
    Raid6 {
        group: u32,
    },
}

impl Raid {
    /// Parses a level name; RAID 5 and 6 take `group` devices per group (default 5 = 4+1
    /// and 6 = 4+2).
    pub fn parse(name: &str, group: Option<u32>) -> Result<Raid, String> {
        let raid = match name {
            "none" | "raid0" => Raid::None,
            "raid1" => Raid::Raid1,
            "raid10" => Raid::Raid10,
            "raid5" => Raid::Raid5 {
                group: group.unwrap_or(5),
            },
            "raid6" => Raid::Raid6 {
                group: group.unwrap_or(6),
            },
            other => {
                return Err(format!(
                    "'{other}'; accepted: none, raid1, raid10, raid5, raid6"
                ));
            }
        };
        match (raid, group) {
            (Raid::Raid5 { group }, _) if !(3..=64).contains(&group) => {
                Err(format!("raid5 groups hold 3 to 64 devices, not {group}"))
            }
            (Raid::Raid6 { group }, _) if !(4..=64).contains(&group) => {
                Err(format!("raid6 groups hold 4 to 64 devices, not {group}"))
            }
            (Raid::None | Raid::Raid1 | Raid::Raid10, Some(_)) => Err(format!(
                "a group size is for raid5 and raid6; {name} has {}",
                match raid {
                    Raid::None => "no groups",
                    _ => "mirrored pairs",
                }
            )),
            _ => Ok(raid),
        }
    }

    /// Device I/Os per host write: 1, 2 (mirrors), 4 (RAID 5: read data and parity, write
    /// both), 6 (RAID 6).
    pub fn write_penalty(self) -> f64 {
        match self {
            Raid::None => 1.0,
            Raid::Raid1 | Raid::Raid10 => 2.0,
            Raid::Raid5 { .. } => 4.0,
            Raid::Raid6 { .. } => 6.0,
        }
    }

    /// The share of a device's capacity that holds data.
    pub fn data_fraction(self) -> f64 {
        match self {
            Raid::None => 1.0,
            Raid::Raid1 | Raid::Raid10 => 0.5,
            Raid::Raid5 { group } => f64::from(group - 1) / f64::from(group),
            Raid::Raid6 { group } => f64::from(group - 2) / f64::from(group),
        }
    }

    /// Devices come in groups of this many.
    pub fn group(self) -> u64 {
        match self {
            Raid::None => 1,
            Raid::Raid1 | Raid::Raid10 => 2,
            Raid::Raid5 { group } | Raid::Raid6 { group } => u64::from(group),
        }
    }

    /// `RAID 1`, `RAID 5 (4+1)`.
    pub fn label(self) -> String {
        match self {
            Raid::None => "no RAID".into(),
            Raid::Raid1 => "RAID 1".into(),
            Raid::Raid10 => "RAID 10".into(),
            Raid::Raid5 { group } => format!("RAID 5 ({}+1)", group - 1),
            Raid::Raid6 { group } => format!("RAID 6 ({}+2)", group - 2),
        }
    }
}

/// What the hosts ask for, per second, at the peak.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Load {
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_mib_per_s: f64,
    pub write_mib_per_s: f64,
}

impl Load {
    pub fn iops(&self) -> f64 {
        self.read_iops + self.write_iops
    }
    pub fn mib_per_s(&self) -> f64 {
        self.read_mib_per_s + self.write_mib_per_s
    }
    /// Device I/Os per second under `raid`.
    pub fn backend_iops(&self, raid: Raid) -> f64 {
        self.read_iops + self.write_iops * raid.write_penalty()
    }
    /// Device MiB per second under `raid`.
    pub fn backend_mib_per_s(&self, raid: Raid) -> f64 {
        self.read_mib_per_s + self.write_mib_per_s / raid.data_fraction()
    }
    fn scaled(&self, by: f64) -> Load {
        Load {
            read_iops: self.read_iops * by,
            write_iops: self.write_iops * by,
            read_mib_per_s: self.read_mib_per_s * by,
            write_mib_per_s: self.write_mib_per_s * by,
        }
    }
}

/// One device's capabilities within the latency limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Device {
    pub capacity_bytes: u64,
    pub raid: Raid,
    /// Device I/Os per second.
    pub iops: f64,
    /// Device MiB per second.
    pub mib_per_s: f64,
    /// The fraction of the device's surface that may be used (0 < f ≤ 1).
    pub usable_surface: f64,
}

/// One array's limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Array {
    /// Host MiB per second the array delivers (realistic, not the data sheet's).
    pub max_mib_per_s: f64,
    pub max_devices: u64,
    /// Spare devices as a fraction of the devices needed (0.1 = 10 %).
    pub spares: f64,
}

/// Everything the arithmetic needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Inputs {
    /// The peak load today.
    pub load: Load,
    /// Multiplies the load (today → tomorrow).
    pub growth: f64,
    /// Usable capacity needed, growth included.
    pub capacity_bytes: u64,
    pub device: Device,
    pub array: Array,
}

/// Which constraint needs the most devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Constraint {
    Iops,
    Bandwidth,
    Capacity,
}

impl Constraint {
    pub fn name(self) -> &'static str {
        match self {
            Constraint::Iops => "IOPS",
            Constraint::Bandwidth => "bandwidth",
            Constraint::Capacity => "capacity",
        }
    }

    /// The name at the start of a line: `IOPS`, `Bandwidth`, `Capacity`.
    pub fn title(self) -> &'static str {
        match self {
            Constraint::Iops => "IOPS",
            Constraint::Bandwidth => "Bandwidth",
            Constraint::Capacity => "Capacity",
        }
    }
}

/// What the load asks of the devices, growth included.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Needs {
    /// The load times growth, as the hosts issue it.
    pub host: Load,
    pub backend_iops: f64,
    pub backend_mib_per_s: f64,
    pub capacity_bytes: u64,
    /// Data one device holds at its usable surface.
    pub usable_bytes_per_device: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Devices {
    pub for_iops: u64,
    pub for_bandwidth: u64,
    pub for_capacity: u64,
    /// The binding constraint's count in whole RAID groups.
    pub before_spares: u64,
    pub spares: u64,
    pub total: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Arrays {
    pub min: u64,
    pub for_bandwidth: u64,
    pub for_devices: u64,
}

/// IOPS per GiB (the data warehouse case of docs/sizing.md: a 146 GB drive gives 1.14, a
/// 450 GB one 0.37).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct IopsPerGib {
    /// Device IOPS over its whole capacity.
    pub device: f64,
    /// Device IOPS over the data it holds at the usable surface.
    pub usable: f64,
    /// Back-end IOPS needed over the capacity needed.
    pub required: f64,
}

/// Sizing by capacity alone (the whole surface, no performance), and what it would deliver.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CapacityFirst {
    pub before_spares: u64,
    pub spares: u64,
    pub total: u64,
    pub arrays: u64,
    /// Back-end IOPS and MiB/s its devices give (at the per-device figures) and the share of
    /// what is needed.
    pub backend_iops: f64,
    pub iops_pct_of_needed: f64,
    pub backend_mib_per_s: f64,
    pub bandwidth_pct_of_needed: f64,
    /// Host MiB/s its arrays give, and the share of what is needed.
    pub array_mib_per_s: f64,
    pub array_pct_of_needed: f64,
}

/// The answer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sizing {
    pub needs: Needs,
    pub devices: Devices,
    pub binding: Constraint,
    pub arrays: Arrays,
    pub iops_per_gib: IopsPerGib,
    pub capacity_first: CapacityFirst,
}

/// The most devices or arrays an answer may have: more means the units are wrong.
pub const MAX_COUNT: f64 = 1e9;

/// `x` rounded up to a whole count, forgiving the last bits of floating-point error
/// (10 % of 400 is 40, not 41).
fn count(x: f64, what: &str) -> Result<u64, String> {
    if !x.is_finite() || x > MAX_COUNT {
        return Err(format!(
            "{what}: {x:.3e} is more than {MAX_COUNT:.0e}; check the units of the plan"
        ));
    }
    Ok((x - 1e-9 * x.abs().max(1.0)).ceil().max(0.0) as u64)
}

fn round_up(n: u64, unit: u64) -> u64 {
    n.div_ceil(unit) * unit
}

fn pct(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        100.0 * part / whole
    } else {
        100.0
    }
}

const GIB: f64 = (1u64 << 30) as f64;

/// Sizes for `i`. Errors (counts beyond [`MAX_COUNT`]) are one line naming what overflowed.
pub fn size(i: &Inputs) -> Result<Sizing, String> {
    let d = &i.device;
    let raid = d.raid;
    let host = i.load.scaled(i.growth);
    let usable = d.capacity_bytes as f64 * d.usable_surface * raid.data_fraction();
    let needs = Needs {
        host,
        backend_iops: host.backend_iops(raid),
        backend_mib_per_s: host.backend_mib_per_s(raid),
        capacity_bytes: i.capacity_bytes,
        usable_bytes_per_device: usable,
    };
    let for_iops = count(needs.backend_iops / d.iops, "devices for IOPS")?;
    let for_bandwidth = count(
        needs.backend_mib_per_s / d.mib_per_s,
        "devices for bandwidth",
    )?;
    let for_capacity = count(i.capacity_bytes as f64 / usable, "devices for capacity")?;
    let (binding, most) = [
        (Constraint::Iops, for_iops),
        (Constraint::Bandwidth, for_bandwidth),
        (Constraint::Capacity, for_capacity),
    ]
    .into_iter()
    .fold((Constraint::Iops, 0), |best, (c, n)| {
        if n > best.1 { (c, n) } else { best }
    });
    let with_spares = |before: u64| -> Result<(u64, u64), String> {
        let spares = count(before as f64 * i.array.spares, "spares")?;
        Ok((spares, before + spares))
    };
    let before_spares = round_up(most.max(1), raid.group());
    let (spares, total) = with_spares(before_spares)?;
    let for_devices = total.div_ceil(i.array.max_devices);
    let arrays_for_bandwidth = count(
        host.mib_per_s() / i.array.max_mib_per_s,
        "arrays for bandwidth",
    )?;
    let arrays = Arrays {
        min: for_devices.max(arrays_for_bandwidth).max(1),
        for_bandwidth: arrays_for_bandwidth,
        for_devices,
    };
    // Capacity first: the whole surface, no performance.
    let cf_before = round_up(
        count(
            i.capacity_bytes as f64 / (d.capacity_bytes as f64 * raid.data_fraction()),
            "devices by capacity",
        )?
        .max(1),
        raid.group(),
    );
    let (cf_spares, cf_total) = with_spares(cf_before)?;
    let cf_arrays = cf_total.div_ceil(i.array.max_devices).max(1);
    let cf_iops = cf_before as f64 * d.iops;
    let cf_mib = cf_before as f64 * d.mib_per_s;
    let cf_array_mib = cf_arrays as f64 * i.array.max_mib_per_s;
    let capacity_gib = i.capacity_bytes as f64 / GIB;
    Ok(Sizing {
        needs,
        devices: Devices {
            for_iops,
            for_bandwidth,
            for_capacity,
            before_spares,
            spares,
            total,
        },
        binding,
        arrays,
        iops_per_gib: IopsPerGib {
            device: d.iops / (d.capacity_bytes as f64 / GIB),
            usable: d.iops / (usable / GIB),
            required: needs.backend_iops / capacity_gib,
        },
        capacity_first: CapacityFirst {
            before_spares: cf_before,
            spares: cf_spares,
            total: cf_total,
            arrays: cf_arrays,
            backend_iops: cf_iops,
            iops_pct_of_needed: pct(cf_iops, needs.backend_iops),
            backend_mib_per_s: cf_mib,
            bandwidth_pct_of_needed: pct(cf_mib, needs.backend_mib_per_s),
            array_mib_per_s: cf_array_mib,
            array_pct_of_needed: pct(cf_array_mib, host.mib_per_s()),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: u64 = 1 << 30;
    const T: u64 = 1 << 40;

    fn inputs(load: Load, raid: Raid) -> Inputs {
        Inputs {
            load,
            growth: 1.0,
            capacity_bytes: T,
            device: Device {
                capacity_bytes: 100 * G,
                raid,
                iops: 100.0,
                mib_per_s: 50.0,
                usable_surface: 1.0,
            },
            array: Array {
                max_mib_per_s: 1000.0,
                max_devices: 100,
                spares: 0.0,
            },
        }
    }

    #[test]
    fn raid_levels_have_their_textbook_penalty_and_data_share() {
        let r5 = Raid::parse("raid5", None).unwrap();
        assert_eq!(r5, Raid::Raid5 { group: 5 });
        assert_eq!(r5.write_penalty(), 4.0);
        assert_eq!(r5.data_fraction(), 0.8);
        assert_eq!(r5.label(), "RAID 5 (4+1)");
        let r6 = Raid::parse("raid6", Some(8)).unwrap();
        assert_eq!((r6.write_penalty(), r6.data_fraction()), (6.0, 0.75));
        assert_eq!(Raid::parse("raid1", None).unwrap().write_penalty(), 2.0);
        assert_eq!(Raid::parse("raid10", None).unwrap().data_fraction(), 0.5);
        assert_eq!(Raid::parse("none", None).unwrap().write_penalty(), 1.0);
        assert!(Raid::parse("raid4", None).unwrap_err().contains("accepted"));
        assert!(Raid::parse("raid5", Some(2)).is_err());
        assert!(Raid::parse("raid1", Some(4)).is_err());
    }

    #[test]
    fn raid5_iops_carry_the_write_penalty_of_4() {
        // 1,000 reads + 500 writes: 1,000 + 500 × 4 = 3,000 device IOPS; at 100 each, 30.
        let load = Load {
            read_iops: 1000.0,
            write_iops: 500.0,
            ..Load::default()
        };
        let s = size(&inputs(load, Raid::Raid5 { group: 5 })).unwrap();
        assert_eq!(s.needs.backend_iops, 3000.0);
        assert_eq!(s.devices.for_iops, 30);
        // 1 TiB at 4/5 of 100 GiB each: 12.8 → 13 devices.
        assert_eq!(s.devices.for_capacity, 13);
        assert_eq!(s.binding, Constraint::Iops);
        // Whole 4+1 groups.
        assert_eq!(s.devices.before_spares, 30);
        // The same without RAID: 1,500.
        let none = size(&inputs(load, Raid::None)).unwrap();
        assert_eq!(none.needs.backend_iops, 1500.0);
        assert_eq!(none.devices.for_iops, 15);
    }

    #[test]
    fn mirrors_write_every_byte_twice() {
        let load = Load {
            read_mib_per_s: 300.0,
            write_mib_per_s: 100.0,
            ..Load::default()
        };
        let s = size(&inputs(load, Raid::Raid1)).unwrap();
        assert_eq!(s.needs.backend_mib_per_s, 500.0);
        assert_eq!(s.devices.for_bandwidth, 10);
        // RAID 5 over 5 devices writes 5/4 of the data: 300 + 125.
        let s = size(&inputs(load, Raid::Raid5 { group: 5 })).unwrap();
        assert_eq!(s.needs.backend_mib_per_s, 425.0);
        assert_eq!(s.devices.for_bandwidth, 9);
        // The array is sized on what hosts move: 400 of 1,000 MiB/s.
        assert_eq!(s.arrays.for_bandwidth, 1);
    }

    #[test]
    fn capacity_at_the_usable_surface_binds_and_spares_go_on_top() {
        let mut i = inputs(Load::default(), Raid::Raid1);
        i.device.usable_surface = 0.25;
        i.array.spares = 0.1;
        let s = size(&i).unwrap();
        // 1 TiB / (100 GiB × 25 % × 50 %) = 81.92 → 82.
        assert_eq!(s.devices.for_capacity, 82);
        assert_eq!(s.binding, Constraint::Capacity);
        assert_eq!(s.devices.before_spares, 82);
        // 8.2 → 9 spares.
        assert_eq!((s.devices.spares, s.devices.total), (9, 91));
        assert_eq!(s.arrays.for_devices, 1);
        // Capacity first: the whole surface, 1 TiB / 50 GiB = 20.48 → 21 → 22 (pairs).
        assert_eq!(s.capacity_first.before_spares, 22);
        assert_eq!(s.capacity_first.spares, 3);
    }

    #[test]
    fn exact_products_do_not_round_up_and_growth_scales_the_load() {
        let mut i = inputs(
            Load {
                read_iops: 2000.0,
                ..Load::default()
            },
            Raid::None,
        );
        i.growth = 2.0;
        i.array.spares = 0.1;
        i.capacity_bytes = 10 * G;
        let s = size(&i).unwrap();
        assert_eq!(s.devices.for_iops, 40);
        assert_eq!((s.devices.spares, s.devices.total), (4, 44));
    }

    #[test]
    fn arrays_are_the_most_of_bandwidth_and_devices() {
        let mut i = inputs(
            Load {
                read_mib_per_s: 4500.0,
                read_iops: 30_000.0,
                ..Load::default()
            },
            Raid::None,
        );
        i.array.max_mib_per_s = 1000.0;
        i.array.max_devices = 100;
        let s = size(&i).unwrap();
        assert_eq!(s.devices.for_iops, 300);
        assert_eq!(s.arrays.for_bandwidth, 5);
        assert_eq!(s.arrays.for_devices, 3);
        assert_eq!(s.arrays.min, 5);
        i.array.max_devices = 50;
        assert_eq!(size(&i).unwrap().arrays.min, 6);
    }

    #[test]
    fn absurd_units_are_an_error_not_an_overflow() {
        let mut i = inputs(
            Load {
                read_iops: 1e300,
                ..Load::default()
            },
            Raid::None,
        );
        assert!(size(&i).unwrap_err().contains("devices for IOPS"));
        i.load.read_iops = 1.0;
        i.device.iops = 1e-300;
        assert!(size(&i).is_err());
    }
}
