//! A synthetic [`RunResult`] for unit tests of the reports: consistent counts (per-second
//! requests and histogram buckets add up to each event's total), noisy per-second values,
//! and text that needs escaping in the host name and paths.

use std::collections::BTreeMap;

use super::result::*;

/// A run of `seconds` seconds with one event per name in `events`; with ASH and OS
/// statistics when `extras` is set.
pub fn run_result(seconds: u32, events: &[&str], extras: bool) -> RunResult {
    let mut rng = fastrand::Rng::with_seed(7);
    let mut timeseries = Vec::with_capacity(seconds as usize * events.len());
    let mut totals: Vec<(u64, u64)> = vec![(0, 0); events.len()];
    for t in 1..=seconds {
        for (i, name) in events.iter().enumerate() {
            // A stall now and then, so the charts have something to show.
            let requests = if rng.u32(0..500) == 0 {
                0
            } else {
                20_000 + rng.u64(0..5_000) + 1_000 * i as u64
            };
            let bytes = requests * 8192;
            totals[i].0 += requests;
            totals[i].1 += bytes;
            let mean = 200.0 + rng.f64() * 100.0;
            timeseries.push(SecondJson {
                t,
                event: (*name).to_string(),
                requests,
                bytes,
                mean_us: (requests > 0).then_some(mean),
                p99_us: (requests > 0).then_some(mean * (3.0 + rng.f64() * 2.0)),
                not_running_s: None,
            });
        }
    }
    let secs = f64::from(seconds);
    let event_results: Vec<EventResult> = events
        .iter()
        .zip(&totals)
        .map(|(name, &(requests, bytes))| {
            // 10 % in < 128 µs, 60 % in < 256 µs, the rest in < 512 µs and < 1 ms.
            let a = requests / 10;
            let b = requests * 6 / 10;
            let c = requests / 4;
            let buckets: Vec<BucketJson> = (0..11)
                .map(|k| BucketJson {
                    lt_us: 1 << k,
                    count: match k {
                        7 => a,
                        8 => b,
                        9 => c,
                        10 => requests - a - b - c,
                        _ => 0,
                    },
                })
                .collect();
            let latency_us = LatencyJson {
                mean: 260.0,
                p50: 210.0,
                p90: 480.0,
                p95: 520.0,
                p99: 800.0,
                p99_9: 950.0,
                p99_99: 990.0,
                max: 1000.0,
            };
            EventResult {
                name: (*name).to_string(),
                requests,
                waits: requests / 32,
                bytes,
                errors: 0,
                iops: requests as f64 / secs,
                mib_per_s: bytes as f64 / secs / (1u64 << 20) as f64,
                latency_us,
                wait_latency_us: latency_us,
                wait_time_s: requests as f64 * 260e-6,
                inflight_avg: requests as f64 / secs * 260e-6,
                submit_calls: requests / 32,
                submit_mean_us: 4.0,
                histogram_micro: buckets.clone(),
                wait_histogram_micro: buckets
                    .iter()
                    .map(|b| BucketJson {
                        lt_us: b.lt_us,
                        count: b.count / 32,
                    })
                    .collect(),
                stability: None,
            }
        })
        .collect();
    let requests: u64 = totals.iter().map(|t| t.0).sum();
    let bytes: u64 = totals.iter().map(|t| t.1).sum();
    let ash = extras.then(|| {
        let mut states = vec!["ON CPU".to_string()];
        states.extend(events.iter().map(|e| e.to_string()));
        AshJson {
            hz: 10,
            samples: u64::from(seconds) * 10,
            seconds: (1..=seconds)
                .map(|t| AshSecondJson {
                    t,
                    active: states
                        .iter()
                        .map(|s| (s.clone(), 0.5 + rng.f64() * 2.0))
                        .collect::<BTreeMap<_, _>>(),
                })
                .collect(),
            samples_by_state: states
                .iter()
                .map(|s| (s.clone(), u64::from(seconds) * 10))
                .collect(),
            states,
        }
    });
    let os = extras.then(|| OsStats {
        cpu: (1..=seconds)
            .map(|t| CpuSecond {
                t,
                cpu: "all".into(),
                user_pct: 10.0 + rng.f64() * 5.0,
                system_pct: 30.0 + rng.f64() * 10.0,
                iowait_pct: 20.0,
                steal_pct: 1.0,
                idle_pct: 30.0,
            })
            .collect(),
        devices: (1..=seconds)
            .map(|t| DiskSecond {
                t,
                device: "vda".into(),
                layer: "disk".into(),
                r_s: 40_000.0 + rng.f64() * 5_000.0,
                rmib_s: 300.0,
                r_await_ms: 0.3 + rng.f64() * 0.1,
                aqu_sz: 12.0,
                util_pct: 99.0,
                ..Default::default()
            })
            .collect(),
        memory: Vec::new(),
        io_pressure: (1..=seconds)
            .map(|t| PressureSecond {
                t,
                some_pct: 40.0,
                full_pct: 10.0,
            })
            .collect(),
        dbio_cpu: Vec::new(),
        cross_check: Some(BlockLayerCheck {
            device: "vda".into(),
            dbio_requests: requests,
            device_requests: requests + 10,
            dbio_bytes: bytes,
            device_bytes: bytes + 10 * 8192,
            ratio: 1.0,
            ..Default::default()
        }),
    });
    let mut r = RunResult {
        job: None,
        classes: Vec::new(),
        verdict: None,
        steady_state: None,
        redo: None,
        oltp: None,
        temp: None,
        schema: SCHEMA.into(),
        dbio_version: "0.1.0".into(),
        dbio_build: None,
        test: "read-iops".into(),
        started_at: "2026-11-22T01:30:35Z".into(),
        measured_seconds: secs,
        partial: false,
        stop_reason: "completed".into(),
        config: RunConfigJson {
            target: "/data/<b>\"x\" & 'y'".into(),
            size_bytes: 1 << 30,
            block_size: 8192,
            files: 4,
            sessions: 8,
            submission: "async".into(),
            io_mode: "setall".into(),
            engine_requested: "auto".into(),
            engine: "uring".into(),
            engine_reason: "auto: io_uring is available".into(),
            engine_notes: Vec::new(),
            engine_features: vec![
                "io_uring ring: single issuer, deferred task running".into(),
                "registered files".into(),
                "registered buffers".into(),
            ],
            open_flags: vec!["O_RDONLY".into(), "O_DIRECT".into(), "O_DSYNC".into()],
            duration_s: secs,
            warmup_s: 5.0,
            batch: 32,
            like: None,
            doublewrite: None,
            keep_inflight: false,
            depth: 8,
            mbrc: 128,
            request_bytes: 8192,
            seed: 42,
            dio_mem_align: 512,
            dio_offset_align: 512,
            dio_align_source: "statx".into(),
            buffer_align: 4096,
            clock: "tsc".into(),
            out: "./dbio-runs".into(),
            continue_on_error: false,
            destructive: false,
            fill: "random".into(),
            verify: false,
            span: 1.0,
        },
        dataset: DataSetJson {
            path: "/data/<b>\"x\" & 'y'".into(),
            kind: "directory".into(),
            size_bytes: 1 << 30,
            files: 4,
            block_size: 8192,
            reused: true,
            prepare_seconds: 0.0,
            fill_method: None,
            fill: Some("random".into()),
            disk_bytes: (1 << 30) + (768 << 20),
            region: None,
            preconditioned: None,
        },
        host: HostJson {
            hostname: "<script>alert(1)</script>".into(),
            kernel: "6.18".into(),
            cpus: 2,
        },
        totals: Totals {
            requests,
            bytes,
            read_iops: requests as f64 / secs,
            read_mib_per_s: bytes as f64 / secs / (1u64 << 20) as f64,
            ..Default::default()
        },
        events: event_results,
        cpu: CpuJson {
            user_s: 1.0,
            system_s: 10.0,
            cpu_s_per_1k_requests: Some(0.004),
        },
        timeseries,
        warnings: vec![crate::warnings::Warning::Recorded(
            "an \"async\" test <ran> synchronously".into(),
        )],
        errors: Vec::new(),
        ash,
        os,
        storage: extras.then(|| StorageJson::Map(storage_map())),
        lint: if extras {
            vec![Finding {
                rule: "max_sectors_kb".into(),
                severity: "warning".into(),
                subject: "vda".into(),
                message: "requests over 512 KiB are split".into(),
            }]
        } else {
            Vec::new()
        },
        verify: None,
        hosts: Vec::new(),
        pg: None,
        mysql: None,
    };
    r.judge_stability();
    r
}

/// The storage stack of a run on a virtio disk, with a note that needs escaping.
pub fn storage_map() -> StorageMap {
    use crate::storage::map::{BlockNode, DiskJson, MountJson, QueueJson};
    StorageMap {
        path: "/data".into(),
        kind: "directory".into(),
        mount: Some(MountJson {
            mount_point: "/".into(),
            fs_type: "ext4".into(),
            source: "/dev/vda".into(),
            options: "rw,relatime".into(),
            dev: "254:0".into(),
        }),
        memory_backed: false,
        devices: vec![BlockNode {
            name: "vda".into(),
            dev: "254:0".into(),
            layer: "disk".into(),
            size_bytes: 256 << 30,
            disk: Some(DiskJson {
                transport: "virtio".into(),
                rotational: Some(true),
                ..Default::default()
            }),
            queue: QueueJson {
                scheduler: Some("none".into()),
                nr_requests: Some(256),
                max_sectors_kb: Some(4096),
                ..Default::default()
            },
            ..Default::default()
        }],
        notes: vec!["<img src=x>".into()],
    }
}
