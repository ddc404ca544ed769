//! Every run's stability (docs/measurement.md, "Stability"): each event's per-second series
//! judged into its `stability` in result.json, and a warning for each figure that moved or
//! swung. The judgement itself is `measure::stability`'s; this reads the series out of a
//! result, so a run on one host, a run across hosts and a `dbio pg` run are judged alike.

use super::result::RunResult;
use crate::measure::second_length_s;
use crate::measure::stability::{self, Second};

impl RunResult {
    /// Judges every event's per-second series (`timeseries`): fills its `stability` and
    /// adds a warning for each of its figures beyond its bound.
    pub fn judge_stability(&mut self) {
        for e in &mut self.events {
            let seconds: Vec<Second> = (self.timeseries.iter())
                .filter(|p| p.event == e.name)
                .map(|p| Second {
                    t: p.t,
                    requests: p.requests,
                    p99_us: p.p99_us,
                    length_s: second_length_s(p.t, self.measured_seconds)
                        - p.not_running_s.unwrap_or(0.0),
                })
                .collect();
            let (s, warnings) = stability::judge(&e.name, &seconds);
            e.stability = s;
            self.warnings.extend(warnings);
        }
    }
}
