//! The protocol between the coordinator and its agents: one JSON object per line, on the
//! agent's stdin (to the agent) and stdout (from it), tagged by `type`. Versioned: the first
//! line an agent writes is [`FromAgent::Hello`] with [`PROTOCOL_VERSION`] and its dbio
//! version, and a coordinator refuses an agent that differs in either.
//!
//! Histograms travel as HdrHistogram's V2 serialization, deflated, in base64 (the format
//! every HdrHistogram library reads), so that the coordinator adds histograms up and takes
//! percentiles of the sum — never averages percentiles.

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::measure::histogram::{Counts, index_of, new_hdr};
use crate::measure::{EventTotals, Interval};
use crate::report::RunResult;

/// Bumped whenever a message changes meaning.
pub const PROTOCOL_VERSION: u32 = 1;

/// What the coordinator tells an agent.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToAgent {
    /// Check this run on your machine (both validation stages, the space for the data set)
    /// and answer [`FromAgent::Checked`] or [`FromAgent::Refused`]. Creates nothing.
    Check(Box<Assignment>),
    /// Prepare the data set and set up the run's threads; answer [`FromAgent::Ready`].
    Run,
    /// Answer [`FromAgent::Pong`] with your clock at once.
    Ping { seq: u32 },
    /// Start the warm-up at this instant of your own clock (`sys::now_ns`).
    Start { at_ns: u64 },
    /// Stop the run now and send what was measured.
    Stop,
}

/// One host's run: the job file every host gets, and what differs for this host.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Assignment {
    /// The run as a job file (`options::save::run_job_file`).
    pub job: String,
    /// The host's name as typed in `--hosts`: `{host}` in the target becomes it.
    pub host: String,
    /// The host's place in `--hosts` (from 0) and how many hosts there are.
    pub index: usize,
    pub hosts: usize,
    /// One data set shared by every host: the first prepares it, then all open it.
    pub shared: bool,
}

/// What an agent tells the coordinator.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromAgent {
    Hello {
        protocol: u32,
        dbio_version: String,
        hostname: String,
        pid: u32,
    },
    /// Sent every second whatever else happens: a host that says nothing for 3 s is lost.
    Alive,
    Checked,
    Refused {
        message: String,
    },
    /// The data set is ready and every thread set up: waiting for [`ToAgent::Start`].
    Ready,
    Pong {
        seq: u32,
        now_ns: u64,
    },
    /// The warm-up began at this instant of the agent's clock.
    Started {
        at_ns: u64,
    },
    /// One second of the measured window: every event's figures and histogram.
    Second {
        t: u32,
        events: Vec<WireInterval>,
    },
    /// The run's end: the host's own result and every event's totals with histograms.
    Final {
        result: Box<RunResult>,
        totals: Vec<WireTotals>,
        exit: i32,
    },
    /// The run could not go on (or start): one line, and the exit status it means.
    Failed {
        message: String,
        exit: i32,
    },
}

/// A histogram as HdrHistogram V2 + deflate, base64; empty for no values.
pub fn encode(c: &Counts) -> String {
    if c.total() == 0 {
        return String::new();
    }
    let mut bytes = Vec::new();
    let h = c.to_hdr();
    let mut s = hdrhistogram::serialization::V2DeflateSerializer::new();
    if hdrhistogram::serialization::Serializer::serialize(&mut s, &h, &mut bytes).is_err() {
        return String::new();
    }
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The counts of a histogram [`encode`] wrote.
pub fn decode(text: &str) -> Result<Counts, String> {
    let mut c = Counts::default();
    if text.is_empty() {
        return Ok(c);
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| format!("a histogram is not base64: {e}"))?;
    let mut d = hdrhistogram::serialization::Deserializer::new();
    let h: hdrhistogram::Histogram<u64> = d
        .deserialize(&mut std::io::Cursor::new(bytes))
        .map_err(|e| format!("a histogram cannot be read: {e:?}"))?;
    let layout = new_hdr();
    for v in h.iter_recorded() {
        let value = layout.lowest_equivalent(v.value_iterated_to());
        c.0[index_of(value)] += v.count_at_value();
    }
    Ok(c)
}

/// One event in one second.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WireInterval {
    pub requests: u64,
    pub bytes: u64,
    pub errors: u64,
    pub latency_sum_ns: u64,
    pub histogram: String,
}

impl WireInterval {
    pub fn of(i: &Interval) -> WireInterval {
        WireInterval {
            requests: i.requests,
            bytes: i.bytes,
            errors: i.errors,
            latency_sum_ns: i.latency_sum_ns,
            histogram: encode(&i.latency),
        }
    }

    pub fn interval(&self) -> Result<Interval, String> {
        Ok(Interval {
            requests: self.requests,
            bytes: self.bytes,
            errors: self.errors,
            latency_sum_ns: self.latency_sum_ns,
            latency: decode(&self.histogram)?,
        })
    }
}

/// An event's totals over the run, histograms encoded.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WireTotals {
    pub requests: u64,
    pub bytes: u64,
    pub latency_sum_ns: u64,
    pub latency_max_ns: u64,
    pub latency: String,
    pub waits: u64,
    pub wait_sum_ns: u64,
    pub wait_max_ns: u64,
    pub wait_latency: String,
    pub submit_calls: u64,
    pub submit_ns: u64,
    pub errors: u64,
    pub service_sum_ns: u64,
    pub service_max_ns: u64,
    pub service: String,
    pub late_sum_ns: u64,
    pub late_max_ns: u64,
}

impl WireTotals {
    pub fn of(t: &EventTotals) -> WireTotals {
        WireTotals {
            requests: t.requests,
            bytes: t.bytes,
            latency_sum_ns: t.latency_sum_ns,
            latency_max_ns: t.latency_max_ns,
            latency: encode(&t.latency),
            waits: t.waits,
            wait_sum_ns: t.wait_sum_ns,
            wait_max_ns: t.wait_max_ns,
            wait_latency: encode(&t.wait_latency),
            submit_calls: t.submit_calls,
            submit_ns: t.submit_ns,
            errors: t.errors,
            service_sum_ns: t.service_sum_ns,
            service_max_ns: t.service_max_ns,
            service: encode(&t.service),
            late_sum_ns: t.late_sum_ns,
            late_max_ns: t.late_max_ns,
        }
    }

    pub fn totals(&self) -> Result<EventTotals, String> {
        Ok(EventTotals {
            requests: self.requests,
            bytes: self.bytes,
            latency_sum_ns: self.latency_sum_ns,
            latency_max_ns: self.latency_max_ns,
            latency: decode(&self.latency)?,
            waits: self.waits,
            wait_sum_ns: self.wait_sum_ns,
            wait_max_ns: self.wait_max_ns,
            wait_latency: decode(&self.wait_latency)?,
            submit_calls: self.submit_calls,
            submit_ns: self.submit_ns,
            errors: self.errors,
            service_sum_ns: self.service_sum_ns,
            service_max_ns: self.service_max_ns,
            service: decode(&self.service)?,
            late_sum_ns: self.late_sum_ns,
            late_max_ns: self.late_max_ns,
        })
    }
}

/// One message as its line (without the newline).
pub fn line<T: Serialize>(msg: &T) -> String {
    serde_json::to_string(msg).expect("protocol messages serialize")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::LiveHistogram;

    #[test]
    fn a_histogram_travels_unchanged() {
        let live = LiveHistogram::new();
        for v in [1u64, 900, 12_345, 1_000_000, 987_654_321, u64::MAX] {
            live.record(v);
            live.record(v / 3 + 1);
        }
        let mut c = Counts::default();
        live.add_to(&mut c);
        let back = decode(&encode(&c)).unwrap();
        assert_eq!(back, c);
        assert_eq!(decode(&encode(&Counts::default())).unwrap().total(), 0);
        assert!(decode("not base64!").is_err());
    }

    #[test]
    fn messages_are_one_line_tagged_by_type() {
        let l = line(&FromAgent::Pong { seq: 3, now_ns: 7 });
        assert_eq!(l, r#"{"type":"pong","seq":3,"now_ns":7}"#);
        let m: ToAgent = serde_json::from_str(r#"{"type":"start","at_ns":5}"#).unwrap();
        assert!(matches!(m, ToAgent::Start { at_ns: 5 }));
        assert!(!line(&ToAgent::Stop).contains('\n'));
    }
}
