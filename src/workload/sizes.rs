//! The request sizes of a job class: one size, weighted sizes drawn per request (a scan
//! whose multiblock reads are mostly 1M, sometimes shorter at extent ends), or — for redo —
//! a uniform range of bytes. Drawing one costs a branch and, for a mix, a random number
//! and a scan of at most [`MAX_SIZES`] entries: nothing is allocated.

use crate::units::size_label;

/// Most sizes one class may mix.
pub const MAX_SIZES: usize = 8;

/// Sizes drawn with given weights.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WeightedSizes {
    n: usize,
    sizes: [u64; MAX_SIZES],
    /// Cumulative weights, the last one being the total.
    cum: [f64; MAX_SIZES],
}

/// What a class's requests (or, for "log file sync", commits) carry, in bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RequestSizes {
    Fixed(u64),
    /// Uniform over lo..=hi (redo bytes per commit or per write).
    Uniform {
        lo: u64,
        hi: u64,
    },
    Weighted(WeightedSizes),
}

impl WeightedSizes {
    /// Sizes with their (relative) weights; errors say what is wrong in one phrase.
    pub fn new(pairs: &[(u64, f64)]) -> Result<WeightedSizes, String> {
        if pairs.is_empty() {
            return Err("no sizes; e.g. { \"1M\" = 80, \"256K\" = 20 }".into());
        }
        if pairs.len() > MAX_SIZES {
            return Err(format!("at most {MAX_SIZES} sizes in a mix"));
        }
        let mut w = WeightedSizes {
            n: pairs.len(),
            sizes: [0; MAX_SIZES],
            cum: [0.0; MAX_SIZES],
        };
        let mut total = 0.0;
        for (i, &(size, weight)) in pairs.iter().enumerate() {
            if !(weight.is_finite() && weight > 0.0) {
                return Err(format!(
                    "the weight of {} must be a number above 0",
                    size_label(size)
                ));
            }
            total += weight;
            w.sizes[i] = size;
            w.cum[i] = total;
        }
        if !total.is_finite() {
            return Err("the weights add up to more than a number can hold; use smaller weights (shares or percentages)".into());
        }
        Ok(w)
    }

    /// (size, share of requests from 0 to 1), in the order given.
    pub fn entries(&self) -> impl Iterator<Item = (u64, f64)> + '_ {
        let total = self.cum[self.n - 1];
        (0..self.n).map(move |i| {
            let before = if i == 0 { 0.0 } else { self.cum[i - 1] };
            (self.sizes[i], (self.cum[i] - before) / total)
        })
    }
}

impl RequestSizes {
    /// The size of the next request.
    #[inline]
    pub fn pick(&self, rng: &mut fastrand::Rng) -> u64 {
        match self {
            RequestSizes::Fixed(v) => *v,
            RequestSizes::Uniform { lo, hi } => rng.u64(*lo..=*hi),
            RequestSizes::Weighted(w) => {
                let x = rng.f64() * w.cum[w.n - 1];
                let i = w.cum[..w.n].iter().position(|&c| x < c).unwrap_or(w.n - 1);
                w.sizes[i]
            }
        }
    }

    pub fn max(&self) -> u64 {
        match self {
            RequestSizes::Fixed(v) => *v,
            RequestSizes::Uniform { hi, .. } => *hi,
            RequestSizes::Weighted(w) => w.sizes[..w.n].iter().copied().max().unwrap_or(0),
        }
    }

    pub fn min(&self) -> u64 {
        match self {
            RequestSizes::Fixed(v) => *v,
            RequestSizes::Uniform { lo, .. } => *lo,
            RequestSizes::Weighted(w) => w.sizes[..w.n].iter().copied().min().unwrap_or(0),
        }
    }

    /// The expected size of a request.
    pub fn mean(&self) -> f64 {
        match self {
            RequestSizes::Fixed(v) => *v as f64,
            RequestSizes::Uniform { lo, hi } => (*lo + *hi) as f64 / 2.0,
            RequestSizes::Weighted(w) => w.entries().map(|(s, share)| s as f64 * share).sum(),
        }
    }

    /// Every size that can be drawn (a uniform range: its ends).
    pub fn sizes(&self) -> Vec<u64> {
        match self {
            RequestSizes::Fixed(v) => vec![*v],
            RequestSizes::Uniform { lo, hi } => vec![*lo, *hi],
            RequestSizes::Weighted(w) => w.sizes[..w.n].to_vec(),
        }
    }

    /// As a job file holds it: `"16K"`, `"512..3000"`, or `{ 1M = 80, 256K = 20 }`.
    pub fn toml(&self) -> toml::Value {
        match self {
            RequestSizes::Fixed(v) => toml::Value::String(size_label(*v)),
            RequestSizes::Uniform { lo, hi } => {
                toml::Value::String(format!("{}..{}", size_label(*lo), size_label(*hi)))
            }
            RequestSizes::Weighted(w) => {
                let mut t = toml::Table::new();
                for i in 0..w.n {
                    let before = if i == 0 { 0.0 } else { w.cum[i - 1] };
                    let share = w.cum[i] - before;
                    let weight = if share.fract() == 0.0 && share.abs() < 1e15 {
                        toml::Value::Integer(share as i64)
                    } else {
                        toml::Value::Float(share)
                    };
                    t.insert(size_label(w.sizes[i]), weight);
                }
                toml::Value::Table(t)
            }
        }
    }

    /// For reports: `16K`, `512..3000`, `1M 80% + 256K 20%`.
    pub fn label(&self) -> String {
        match self {
            RequestSizes::Fixed(v) => size_label(*v),
            RequestSizes::Uniform { lo, hi } => format!("{}..{}", size_label(*lo), size_label(*hi)),
            RequestSizes::Weighted(w) => w
                .entries()
                .map(|(s, share)| format!("{} {:.0}%", size_label(s), share * 100.0))
                .collect::<Vec<_>>()
                .join(" + "),
        }
    }

    /// Whether every request has the same size.
    pub fn is_fixed(&self) -> bool {
        self.min() == self.max()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighted_sizes_are_drawn_in_their_proportions() {
        let w = WeightedSizes::new(&[(8192, 3.0), (65536, 1.0)]).unwrap();
        let sizes = RequestSizes::Weighted(w);
        let mut rng = fastrand::Rng::with_seed(7);
        let n = 100_000;
        let small = (0..n).filter(|_| sizes.pick(&mut rng) == 8192).count();
        let share = small as f64 / n as f64;
        assert!((share - 0.75).abs() < 0.01, "{share}");
        assert_eq!(sizes.mean(), 0.75 * 8192.0 + 0.25 * 65536.0);
        assert_eq!((sizes.min(), sizes.max()), (8192, 65536));
        assert_eq!(sizes.label(), "8K 75% + 64K 25%");
        assert_eq!(sizes.toml().to_string(), "{ 8K = 3, 64K = 1 }");
    }

    #[test]
    fn bad_mixes_are_refused() {
        assert!(WeightedSizes::new(&[]).is_err());
        assert!(WeightedSizes::new(&[(8192, 0.0)]).is_err());
        assert!(WeightedSizes::new(&[(8192, f64::NAN)]).is_err());
        let nine: Vec<(u64, f64)> = (1..=9).map(|i| (i * 8192, 1.0)).collect();
        assert!(WeightedSizes::new(&nine).is_err());
        let huge = WeightedSizes::new(&[(8192, 1e308), (16384, 1e308)]);
        assert!(huge.unwrap_err().contains("add up"));
    }

    #[test]
    fn uniform_and_fixed() {
        let mut rng = fastrand::Rng::with_seed(1);
        let u = RequestSizes::Uniform { lo: 512, hi: 3000 };
        for _ in 0..1000 {
            assert!((512..=3000).contains(&u.pick(&mut rng)));
        }
        assert_eq!(RequestSizes::Fixed(16384).pick(&mut rng), 16384);
        assert!(RequestSizes::Fixed(16384).is_fixed());
        assert_eq!(u.toml().to_string(), "\"512..3000\"");
    }
}
