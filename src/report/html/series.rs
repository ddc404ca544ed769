//! The charts of a run's report, drawn from its per-second series: events, ASH, the
//! operating system and the block devices. Only formats that draw use them.

use std::fmt::Write;

use super::chart::{self, Layer, Line, Measure, Reference};
use super::{escape, event_color, legend};
use crate::report::result::{CpuSecond, DiskSecond, MemSecond, RunResult};
use crate::report::sections::{SecondRow, format::thousands, second_rows};

/// ASH draws time on CPU in green, as database tools do.
const ON_CPU_COLOR: &str = "#2ca02c";

/// IOPS, MiB/s and latency (p99 solid, mean dashed) of every event, per second.
pub(super) fn per_second(o: &mut String, r: &RunResult) {
    let seconds = r.timeseries.iter().map(|p| p.t as usize).max().unwrap_or(0);
    if seconds == 0 {
        return;
    }
    let series = |f: &dyn Fn(&SecondRow) -> Option<f64>| {
        let mut v = vec![vec![None; seconds]; r.events.len()];
        for p in second_rows(r) {
            let slot = (r.events.iter().position(|e| e.name == p.event))
                .and_then(|e| v[e].get_mut((p.t as usize).wrapping_sub(1)));
            if let Some(slot) = slot {
                *slot = f(&p);
            }
        }
        v
    };
    let lines = |values: Vec<Vec<Option<f64>>>, dashed: bool, suffix: &str| {
        values
            .into_iter()
            .enumerate()
            .map(|(i, values)| Line {
                label: format!("{}{suffix}", r.events[i].name),
                color: event_color(i),
                dashed,
                values,
            })
            .collect::<Vec<_>>()
    };
    legend(
        o,
        r.events
            .iter()
            .enumerate()
            .map(|(i, e)| (e.name.as_str(), event_color(i))),
    );
    let iops = lines(series(&|p| Some(p.requests_per_s)), false, "");
    o.push_str("<h3>IOPS</h3>");
    o.push_str(&chart::lines(Measure::Amount("requests/s"), seconds, &iops));
    let mib = lines(series(&|p| Some(p.mib_per_s)), false, "");
    o.push_str("<h3>MiB/s</h3>");
    o.push_str(&chart::lines(Measure::Amount("MiB/s"), seconds, &mib));
    let mut lat = lines(series(&|p| p.p99_us), false, " p99");
    lat.extend(lines(series(&|p| p.mean_us), true, " mean"));
    o.push_str("<h3>Latency per request: p99 (solid) and mean (dashed)</h3>");
    o.push_str(&chart::lines(Measure::LatencyUs("latency"), seconds, &lat));
}

/// Average active sessions per state, per second, stacked.
pub(super) fn ash(o: &mut String, r: &RunResult) {
    let Some(ash) = &r.ash else {
        return;
    };
    let seconds = ash.seconds.iter().map(|s| s.t as usize).max().unwrap_or(0);
    let _ = write!(
        o,
        "<p class=\"note\">Average active sessions per second, sampled {} times a second \
         ({} samples).</p>",
        ash.hz,
        thousands(ash.samples)
    );
    if seconds == 0 {
        return;
    }
    let layers: Vec<Layer> = ash
        .states
        .iter()
        .enumerate()
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
            Layer {
                label: state.clone(),
                color: state_color(r, state, k),
                values,
            }
        })
        .collect();
    legend(o, layers.iter().map(|l| (l.label.as_str(), l.color)));
    let reference = Reference {
        value: r.config.sessions as f64,
        label: format!("{} sessions", r.config.sessions),
    };
    // A closed loop keeps its sessions busy: the axis reaches the session count, and the
    // line there shows how near the run came. An open loop (classes with a rate) has only
    // as many sessions active as its arrivals need: the axis follows what was active, at
    // least one session, and the session line shows only when the run reached it.
    let open_loop = r.classes.iter().any(|c| c.rate_target.is_some());
    let min_top = if open_loop { 1.0 } else { reference.value };
    o.push_str(&chart::stacked(
        Measure::Amount("average active sessions"),
        seconds,
        &layers,
        Some(&reference),
        min_top,
    ));
}

/// CPU, memory (dirty and writeback), I/O pressure and dbio's own CPU, per second.
pub(super) fn os(o: &mut String, r: &RunResult) {
    let Some(os) = &r.os else {
        return;
    };
    let all: Vec<_> = os.cpu.iter().filter(|c| c.cpu == "all").collect();
    if let Some(seconds) = all.iter().map(|c| c.t as usize).max().filter(|&n| n > 0) {
        let layer = |label: &str, color, f: &dyn Fn(&CpuSecond) -> f64| {
            let mut values = vec![0.0; seconds];
            for c in &all {
                if let Some(slot) = values.get_mut((c.t as usize).wrapping_sub(1)) {
                    *slot = f(c);
                }
            }
            Layer {
                label: label.to_string(),
                color,
                values,
            }
        };
        let layers = [
            layer("user", "#1f77b4", &|c| c.user_pct),
            layer("system", "#d62728", &|c| c.system_pct),
            layer("iowait", "#ff7f0e", &|c| c.iowait_pct),
            layer("steal", "#7f7f7f", &|c| c.steal_pct),
        ];
        o.push_str("<h3>CPU (all CPUs)</h3>");
        legend(o, layers.iter().map(|l| (l.label.as_str(), l.color)));
        o.push_str(&chart::stacked(
            Measure::Percent("% CPU", true),
            seconds,
            &layers,
            None,
            0.0,
        ));
    }
    if let Some(seconds) = os
        .memory
        .iter()
        .map(|m| m.t as usize)
        .max()
        .filter(|&n| n > 0)
    {
        let line = |label: &str, color, dashed, f: &dyn Fn(&MemSecond) -> f64| {
            let mut values = vec![None; seconds];
            for m in &os.memory {
                if let Some(slot) = values.get_mut((m.t as usize).wrapping_sub(1)) {
                    *slot = Some(f(m));
                }
            }
            Line {
                label: label.to_string(),
                color,
                dashed,
                values,
            }
        };
        let lines = [
            line("dirty", "#d62728", false, &|m| m.dirty_mib),
            line("writeback", "#1f77b4", true, &|m| m.writeback_mib),
        ];
        o.push_str("<h3>Memory: dirty and writeback pages</h3>");
        legend(o, lines.iter().map(|l| (l.label.as_str(), l.color)));
        o.push_str(&chart::lines(Measure::Amount("MiB"), seconds, &lines));
    }
    if let Some(seconds) = os
        .io_pressure
        .iter()
        .map(|p| p.t as usize)
        .max()
        .filter(|&n| n > 0)
    {
        let mut some = vec![None; seconds];
        let mut full = vec![None; seconds];
        for p in &os.io_pressure {
            let i = (p.t as usize).wrapping_sub(1);
            if i < seconds {
                some[i] = Some(p.some_pct);
                full[i] = Some(p.full_pct);
            }
        }
        let lines = [
            Line {
                label: "some".into(),
                color: "#ff7f0e",
                dashed: false,
                values: some,
            },
            Line {
                label: "full".into(),
                color: "#d62728",
                dashed: true,
                values: full,
            },
        ];
        o.push_str("<h3>I/O pressure (PSI)</h3>");
        legend(o, lines.iter().map(|l| (l.label.as_str(), l.color)));
        o.push_str(&chart::lines(
            Measure::Percent("% of time stalled on I/O", true),
            seconds,
            &lines,
        ));
    }
    if let Some(seconds) = os
        .dbio_cpu
        .iter()
        .map(|p| p.t as usize)
        .max()
        .filter(|&n| n > 0)
    {
        let mut user = vec![0.0; seconds];
        let mut system = vec![0.0; seconds];
        for p in &os.dbio_cpu {
            let i = (p.t as usize).wrapping_sub(1);
            if i < seconds {
                user[i] = p.user_pct;
                system[i] = p.system_pct;
            }
        }
        let layers = [
            Layer {
                label: "user".into(),
                color: "#1f77b4",
                values: user,
            },
            Layer {
                label: "system".into(),
                color: "#d62728",
                values: system,
            },
        ];
        o.push_str("<h3>dbio's own CPU</h3>");
        legend(o, layers.iter().map(|l| (l.label.as_str(), l.color)));
        o.push_str(&chart::stacked(
            Measure::Percent("% of one CPU", false),
            seconds,
            &layers,
            None,
            0.0,
        ));
    }
}

/// Every block device under the data set, per second: requests, MiB, await, utilization.
pub(super) fn devices(o: &mut String, r: &RunResult) {
    let Some(os) = &r.os else {
        return;
    };
    let mut devices: Vec<(&str, &str)> = Vec::new();
    for d in &os.devices {
        if !devices.iter().any(|(n, _)| *n == d.device) {
            devices.push((&d.device, &d.layer));
        }
    }
    if let Some(seconds) = os
        .devices
        .iter()
        .map(|d| d.t as usize)
        .max()
        .filter(|&n| n > 0)
    {
        let per_device = |f: &dyn Fn(&DiskSecond) -> f64, dashed, what: &str| {
            devices
                .iter()
                .enumerate()
                .map(|(i, (name, _))| {
                    let mut values = vec![None; seconds];
                    for d in os.devices.iter().filter(|d| d.device == *name) {
                        if let Some(slot) = values.get_mut((d.t as usize).wrapping_sub(1)) {
                            *slot = Some(f(d));
                        }
                    }
                    Line {
                        label: format!("{name} {what}"),
                        color: event_color(i),
                        dashed,
                        values,
                    }
                })
                .collect::<Vec<_>>()
        };
        legend(
            o,
            devices
                .iter()
                .enumerate()
                .map(|(i, (n, _))| (*n, event_color(i))),
        );
        let names: Vec<String> = devices.iter().map(|(n, l)| format!("{n} ({l})")).collect();
        let _ = write!(
            o,
            "<p class=\"note\">Every layer under the data set: {}. Reads solid, writes dashed.</p>",
            escape(&names.join(", "))
        );
        o.push_str("<h4>Requests per second</h4>");
        let mut reqs = per_device(&|d| d.r_s, false, "r/s");
        reqs.extend(per_device(&|d| d.w_s, true, "w/s"));
        o.push_str(&chart::lines(Measure::Amount("requests/s"), seconds, &reqs));
        o.push_str("<h4>MiB per second</h4>");
        let mut mib = per_device(&|d| d.rmib_s, false, "read MiB/s");
        mib.extend(per_device(&|d| d.wmib_s, true, "write MiB/s"));
        o.push_str(&chart::lines(Measure::Amount("MiB/s"), seconds, &mib));
        o.push_str("<h4>Average time per request (await)</h4>");
        let mut wait = per_device(&|d| d.r_await_ms * 1000.0, false, "r_await");
        wait.extend(per_device(&|d| d.w_await_ms * 1000.0, true, "w_await"));
        o.push_str(&chart::lines(Measure::LatencyUs("await"), seconds, &wait));
        o.push_str("<h4>Utilization</h4>");
        let util = per_device(&|d| d.util_pct, false, "util");
        o.push_str(&chart::lines(
            Measure::Percent("% utilization", true),
            seconds,
            &util,
        ));
    }
}

/// ASH colours: ON CPU green; an event the colour it has in the other charts; any other
/// state (a background writer's event, "idle") the next free colour.
fn state_color(r: &RunResult, state: &str, k: usize) -> &'static str {
    if state == "ON CPU" {
        return ON_CPU_COLOR;
    }
    match r.events.iter().position(|e| e.name == state) {
        Some(i) => event_color(i),
        None => event_color(r.events.len() + k),
    }
}
