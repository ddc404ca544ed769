//! Each host's clock against the coordinator's, measured over the channel itself as NTP
//! does: several ping-pongs, the one with the smallest round trip kept. If the agent read
//! its clock at `agent` while the coordinator sent at `sent` and heard back at `heard`, the
//! agent's reading lies somewhere in `sent..heard`; taking the middle, the offset is
//! `agent − (sent + rtt/2)`, wrong by at most `rtt/2` (the uncertainty).

/// A host's clock: `agent time = coordinator time + offset_ns`, within ± `uncertainty_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Offset {
    pub offset_ns: i64,
    pub uncertainty_ns: u64,
}

/// How many ping-pongs each host gets.
pub const SAMPLES: u32 = 8;

/// Above this uncertainty a host gets a warning: its start may differ by that much.
pub const WARN_UNCERTAINTY_NS: u64 = 10_000_000;

/// One ping-pong: coordinator send, agent reading, coordinator receipt.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub sent_ns: u64,
    pub agent_ns: u64,
    pub heard_ns: u64,
}

/// The offset from the sample with the smallest round trip; None without samples.
pub fn offset(samples: &[Sample]) -> Option<Offset> {
    let best = samples
        .iter()
        .filter(|s| s.heard_ns >= s.sent_ns)
        .min_by_key(|s| s.heard_ns - s.sent_ns)?;
    let rtt = best.heard_ns - best.sent_ns;
    let middle = best.sent_ns + rtt / 2;
    Some(Offset {
        offset_ns: best.agent_ns as i64 - middle as i64,
        uncertainty_ns: rtt.div_ceil(2),
    })
}

impl Offset {
    /// The agent's reading of the coordinator's instant `at_ns`.
    pub fn to_agent(&self, at_ns: u64) -> u64 {
        (at_ns as i64 + self.offset_ns).max(0) as u64
    }

    /// The coordinator's reading of the agent's instant `at_ns`.
    pub fn from_agent(&self, at_ns: u64) -> u64 {
        (at_ns as i64 - self.offset_ns).max(0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smallest_round_trip_wins() {
        // The agent's clock runs 1,000,000 ns ahead; the second sample had a short trip.
        let s = [
            Sample {
                sent_ns: 100,
                agent_ns: 1_000_900,
                heard_ns: 1_100,
            },
            Sample {
                sent_ns: 2_000,
                agent_ns: 1_002_050,
                heard_ns: 2_100,
            },
            Sample {
                sent_ns: 3_000,
                agent_ns: 1_003_010,
                heard_ns: 3_900,
            },
        ];
        let o = offset(&s).unwrap();
        assert_eq!(o.uncertainty_ns, 50);
        assert_eq!(o.offset_ns, 1_000_000);
        assert_eq!(o.to_agent(5_000), 1_005_000);
        assert_eq!(o.from_agent(1_005_000), 5_000);
        assert!(offset(&[]).is_none());
    }
}
