//! The charts of a run's report, made from its per-second series: events, ASH, the
//! operating system and the block devices. Each chart carries its points; only formats
//! that draw show them.

use super::model::{Axis, Band, Block, Chart, Color, Lines, Measure, Series};
use super::{SecondRow, format::thousands, second_rows};
use crate::report::result::{CpuSecond, DiskSecond, MemSecond, RunResult, Spread, Stability};

/// ASH draws time on CPU in green, as database tools do.
const ON_CPU_COLOR: Color = Color::Fixed("#2ca02c");

fn chart(c: Lines) -> Block {
    Block::Chart(Chart::Lines(c))
}

/// Per-second lines of `series` under a heading.
fn lines(title: &str, seconds: usize, y: Measure, series: Vec<Series>) -> Lines {
    Lines::new(Axis::Seconds(seconds), y, series).title(title)
}

/// Per-second layers of `values`, stacked; `values[i]` is second `i + 1`.
fn layer(label: &str, color: Color, values: Vec<f64>) -> Series {
    Series::per_second(label, color, values.into_iter().map(Some).collect())
}

/// IOPS, MiB/s and latency (p99 solid, mean dashed) of every event, per second.
pub(super) fn per_second(r: &RunResult) -> Vec<Block> {
    let seconds = r.timeseries.iter().map(|p| p.t as usize).max().unwrap_or(0);
    if seconds == 0 {
        return Vec::new();
    }
    let rows: Vec<SecondRow> = second_rows(r).collect();
    let series = |f: &dyn Fn(&SecondRow) -> Option<f64>| {
        let mut v = vec![vec![None; seconds]; r.events.len()];
        for p in &rows {
            let slot = (r.events.iter().position(|e| e.name == p.event))
                .and_then(|e| v[e].get_mut((p.t as usize).wrapping_sub(1)));
            if let Some(slot) = slot {
                *slot = f(p);
            }
        }
        v
    };
    let lines_of = |values: Vec<Vec<Option<f64>>>, dashed: bool, suffix: &str| {
        (values.into_iter().enumerate())
            .map(|(i, values)| {
                let label = format!("{}{suffix}", r.events[i].name);
                Series::per_second(label, Color::Palette(i), values).dashed(dashed)
            })
            .collect::<Vec<_>>()
    };
    let legend = (r.events.iter().enumerate())
        .map(|(i, e)| (e.name.clone(), Color::Palette(i)))
        .collect();
    let iops = lines_of(series(&|p| Some(p.requests_per_s)), false, "");
    let mib = lines_of(series(&|p| Some(p.mib_per_s)), false, "");
    let mut lat = lines_of(series(&|p| p.p99_us), false, " p99");
    lat.extend(lines_of(series(&|p| p.mean_us), true, " mean"));
    let mut iops = lines("IOPS", seconds, Measure::Amount("requests/s"), iops);
    iops.bands = unstable(r, |s| Some(&s.rate), "requests");
    let mut mib = lines("MiB/s", seconds, Measure::Amount("MiB/s"), mib);
    mib.bands = iops.bands.clone();
    let mut lat = lines(
        "Latency per request: p99 (solid) and mean (dashed)",
        seconds,
        Measure::LatencyUs("latency"),
        lat,
    );
    lat.bands = unstable(r, |s| s.p99_us.as_ref(), "p99");
    let mut out = vec![Block::Chart(Chart::Legend(legend))];
    if !iops.bands.is_empty() || !lat.bands.is_empty() {
        out.push(Block::Chart(Chart::Caption(
            "Shaded: the seconds an unstable event spent off its opening level (it moved) or off its median (it swung), in its colour; see Stability.".into(),
        )));
    }
    out.extend([chart(iops), chart(mib), chart(lat)]);
    out
}

/// The stretches of every event whose `figure` (rate or p99) was unstable, as bands in the
/// event's colour.
fn unstable(
    r: &RunResult,
    figure: impl Fn(&Stability) -> Option<&Spread>,
    what: &str,
) -> Vec<Band> {
    let mut bands = Vec::new();
    for (i, e) in r.events.iter().enumerate() {
        let Some(sp) = e.stability.as_ref().and_then(&figure) else {
            continue;
        };
        for &(first, last) in &sp.stretches {
            bands.push(Band {
                from: f64::from(first) - 1.0,
                to: f64::from(last),
                color: Color::Palette(i),
                label: format!(
                    "{}: {what} {} in seconds {first}–{last}",
                    e.name,
                    if sp.moved() {
                        "off its opening level"
                    } else {
                        "off its median"
                    }
                ),
            });
        }
    }
    bands
}

/// Average active sessions per state, per second, stacked.
pub(super) fn ash(r: &RunResult) -> Vec<Block> {
    let Some(ash) = &r.ash else {
        return Vec::new();
    };
    let seconds = ash.seconds.iter().map(|s| s.t as usize).max().unwrap_or(0);
    let mut out = vec![Block::Chart(Chart::Caption(format!(
        "Average active sessions per second, sampled {} times a second ({} samples).",
        ash.hz,
        thousands(ash.samples)
    )))];
    if seconds == 0 {
        return out;
    }
    let layers: Vec<Series> = (ash.states.iter().enumerate())
        .map(|(k, state)| {
            let mut values = vec![0.0; seconds];
            for s in &ash.seconds {
                if let (Some(slot), Some(v)) = (
                    values.get_mut((s.t as usize).wrapping_sub(1)),
                    s.active.get(state),
                ) {
                    *slot = *v;
                }
            }
            layer(state, state_color(r, state, k), values)
        })
        .collect();
    let sessions = r.config.sessions as f64;
    // A closed loop keeps its sessions busy: the axis reaches the session count, and the
    // line there shows how near the run came. An open loop (classes with a rate) has only
    // as many sessions active as its arrivals need: the axis follows what was active, at
    // least one session, and the session line shows only when the run reached it.
    let open_loop = r.classes.iter().any(|c| c.rate_target.is_some());
    let mut c = Lines::new(
        Axis::Seconds(seconds),
        Measure::Amount("average active sessions"),
        layers,
    );
    c.stacked = true;
    c.legend = true;
    c.reference = Some((sessions, format!("{} sessions", r.config.sessions)));
    c.min_top = if open_loop { 1.0 } else { sessions };
    out.push(chart(c));
    out
}

/// Stacked per-second layers under a heading, with a legend.
fn stacked(title: &str, seconds: usize, y: Measure, layers: Vec<Series>) -> Block {
    let mut c = lines(title, seconds, y, layers);
    c.stacked = true;
    c.legend = true;
    chart(c)
}

/// Per-second lines under a heading, with a legend.
fn with_legend(title: &str, seconds: usize, y: Measure, series: Vec<Series>) -> Block {
    let mut c = lines(title, seconds, y, series);
    c.legend = true;
    chart(c)
}

/// CPU, memory (dirty and writeback), I/O pressure and dbio's own CPU, per second.
pub(super) fn os(r: &RunResult) -> Vec<Block> {
    let Some(os) = &r.os else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let all: Vec<_> = os.cpu.iter().filter(|c| c.cpu == "all").collect();
    if let Some(seconds) = all.iter().map(|c| c.t as usize).max().filter(|&n| n > 0) {
        let cpu = |label: &str, color, f: &dyn Fn(&CpuSecond) -> f64| {
            let mut values = vec![0.0; seconds];
            for c in &all {
                if let Some(slot) = values.get_mut((c.t as usize).wrapping_sub(1)) {
                    *slot = f(c);
                }
            }
            layer(label, Color::Fixed(color), values)
        };
        let layers = vec![
            cpu("user", "#1f77b4", &|c| c.user_pct),
            cpu("system", "#d62728", &|c| c.system_pct),
            cpu("iowait", "#ff7f0e", &|c| c.iowait_pct),
            cpu("steal", "#7f7f7f", &|c| c.steal_pct),
        ];
        out.push(stacked(
            "CPU (all CPUs)",
            seconds,
            Measure::Percent("% CPU", true),
            layers,
        ));
    }
    if let Some(seconds) = (os.memory.iter().map(|m| m.t as usize).max()).filter(|&n| n > 0) {
        let line = |label: &str, color, dashed, f: &dyn Fn(&MemSecond) -> f64| {
            let mut values = vec![None; seconds];
            for m in &os.memory {
                if let Some(slot) = values.get_mut((m.t as usize).wrapping_sub(1)) {
                    *slot = Some(f(m));
                }
            }
            Series::per_second(label, Color::Fixed(color), values).dashed(dashed)
        };
        let lines = vec![
            line("dirty", "#d62728", false, &|m| m.dirty_mib),
            line("writeback", "#1f77b4", true, &|m| m.writeback_mib),
        ];
        out.push(with_legend(
            "Memory: dirty and writeback pages",
            seconds,
            Measure::Amount("MiB"),
            lines,
        ));
    }
    if let Some(seconds) = (os.io_pressure.iter().map(|p| p.t as usize).max()).filter(|&n| n > 0) {
        let mut some = vec![None; seconds];
        let mut full = vec![None; seconds];
        for p in &os.io_pressure {
            let i = (p.t as usize).wrapping_sub(1);
            if i < seconds {
                some[i] = Some(p.some_pct);
                full[i] = Some(p.full_pct);
            }
        }
        let lines = vec![
            Series::per_second("some", Color::Fixed("#ff7f0e"), some),
            Series::per_second("full", Color::Fixed("#d62728"), full).dashed(true),
        ];
        out.push(with_legend(
            "I/O pressure (PSI)",
            seconds,
            Measure::Percent("% of time stalled on I/O", true),
            lines,
        ));
    }
    if let Some(seconds) = (os.dbio_cpu.iter().map(|p| p.t as usize).max()).filter(|&n| n > 0) {
        let mut user = vec![0.0; seconds];
        let mut system = vec![0.0; seconds];
        for p in &os.dbio_cpu {
            let i = (p.t as usize).wrapping_sub(1);
            if i < seconds {
                user[i] = p.user_pct;
                system[i] = p.system_pct;
            }
        }
        let layers = vec![
            layer("user", Color::Fixed("#1f77b4"), user),
            layer("system", Color::Fixed("#d62728"), system),
        ];
        out.push(stacked(
            "dbio's own CPU",
            seconds,
            Measure::Percent("% of one CPU", false),
            layers,
        ));
    }
    out
}

/// Every block device under the data set, per second: requests, MiB, await, utilization.
pub(super) fn devices(r: &RunResult) -> Vec<Block> {
    let Some(os) = &r.os else {
        return Vec::new();
    };
    let mut devices: Vec<(&str, &str)> = Vec::new();
    for d in &os.devices {
        if !devices.iter().any(|(n, _)| *n == d.device) {
            devices.push((&d.device, &d.layer));
        }
    }
    let Some(seconds) = (os.devices.iter().map(|d| d.t as usize).max()).filter(|&n| n > 0) else {
        return Vec::new();
    };
    let per_device = |f: &dyn Fn(&DiskSecond) -> f64, dashed, what: &str| {
        (devices.iter().enumerate())
            .map(|(i, (name, _))| {
                let mut values = vec![None; seconds];
                for d in os.devices.iter().filter(|d| d.device == *name) {
                    if let Some(slot) = values.get_mut((d.t as usize).wrapping_sub(1)) {
                        *slot = Some(f(d));
                    }
                }
                Series::per_second(format!("{name} {what}"), Color::Palette(i), values)
                    .dashed(dashed)
            })
            .collect::<Vec<_>>()
    };
    let legend = (devices.iter().enumerate())
        .map(|(i, (n, _))| (n.to_string(), Color::Palette(i)))
        .collect();
    let names: Vec<String> = devices.iter().map(|(n, l)| format!("{n} ({l})")).collect();
    let minor = |title: &str, y: Measure, series: Vec<Series>| {
        let mut c = lines(title, seconds, y, series);
        c.minor = true;
        chart(c)
    };
    let mut reqs = per_device(&|d| d.r_s, false, "r/s");
    reqs.extend(per_device(&|d| d.w_s, true, "w/s"));
    let mut mib = per_device(&|d| d.rmib_s, false, "read MiB/s");
    mib.extend(per_device(&|d| d.wmib_s, true, "write MiB/s"));
    let mut wait = per_device(&|d| d.r_await_ms * 1000.0, false, "r_await");
    wait.extend(per_device(&|d| d.w_await_ms * 1000.0, true, "w_await"));
    let util = per_device(&|d| d.util_pct, false, "util");
    vec![
        Block::Chart(Chart::Legend(legend)),
        Block::Chart(Chart::Caption(format!(
            "Every layer under the data set: {}. Reads solid, writes dashed.",
            names.join(", ")
        ))),
        minor("Requests per second", Measure::Amount("requests/s"), reqs),
        minor("MiB per second", Measure::Amount("MiB/s"), mib),
        minor(
            "Average time per request (await)",
            Measure::LatencyUs("await"),
            wait,
        ),
        minor("Utilization", Measure::Percent("% utilization", true), util),
    ]
}

/// ASH colours: ON CPU green; an event the colour it has in the other charts; any other
/// state (a background writer's event, "idle") the next free colour.
fn state_color(r: &RunResult, state: &str, k: usize) -> Color {
    if state == "ON CPU" {
        return ON_CPU_COLOR;
    }
    match r.events.iter().position(|e| e.name == state) {
        Some(i) => Color::Palette(i),
        None => Color::Palette(r.events.len() + k),
    }
}
