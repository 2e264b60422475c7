//! A small log-bucket latency histogram: per-task wakeup latencies in a few hundred bytes.
//!
//! Values (ns) below 16 have a bucket each; above, every power of two is split into 16
//! equal buckets, so a bucket `[low, low + w)` has `w ≤ low / 16`. A quantile is reported as
//! its bucket's midpoint clamped to the smallest and largest value recorded, so it is
//! within `w / 2 ≤ low / 32` of a value in the bucket: **relative error at most 1/32**
//! (exact below 16 ns, and exact for the minimum and maximum, ranks 1 and n).
//!
//! Only buckets that were hit are stored, as a sorted vector of `bucket << 48 | count`
//! words, because a task's latencies usually fall in a few dozen buckets while the range
//! of possible ones (1 ns … 2^64 ns) needs 976; a dense per-task array would cost kilobytes
//! per thread.

/// Sub-buckets per power of two (`2^SUB_BITS`).
const SUB_BITS: u32 = 4;
const SUB: u64 = 1 << SUB_BITS;
/// Buckets of the whole `u64` range.
pub const BUCKETS: usize = (SUB + (64 - SUB_BITS as u64) * SUB) as usize;
const COUNT_MASK: u64 = (1 << 48) - 1;

/// The bucket of `v`.
pub fn bucket(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let e = 63 - u64::from(v.leading_zeros());
    let shift = e - u64::from(SUB_BITS);
    let m = (v >> shift) & (SUB - 1);
    (SUB + shift * SUB + m) as usize
}

/// The midpoint of bucket `b` (its only value below 16).
fn midpoint(b: usize) -> u64 {
    let b = b as u64;
    if b < SUB {
        return b;
    }
    let shift = (b - SUB) / SUB;
    let m = (b - SUB) % SUB;
    let low = (SUB + m) << shift;
    low + ((1u64 << shift) >> 1)
}

/// A sparse log-bucket histogram (see the module documentation for its accuracy).
#[derive(Clone, Debug, Default)]
pub struct LatencyHist {
    /// `bucket << 48 | count`, sorted by bucket.
    buckets: Vec<u64>,
    total: u64,
    min: u64,
    max: u64,
}

impl LatencyHist {
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }
    pub fn max(&self) -> u64 {
        self.max
    }

    pub fn record(&mut self, v: u64) {
        let b = bucket(v) as u64;
        match self.buckets.binary_search_by(|e| (e >> 48).cmp(&b)) {
            Ok(i) => {
                if self.buckets[i] & COUNT_MASK < COUNT_MASK {
                    self.buckets[i] += 1;
                }
            }
            Err(i) => self.buckets.insert(i, (b << 48) | 1),
        }
        self.min = if self.total == 0 { v } else { self.min.min(v) };
        self.max = self.max.max(v);
        self.total += 1;
    }

    /// The value at quantile `num / den` (0 when empty): the smallest bucket whose
    /// cumulative count reaches `⌈num·total/den⌉` (at least 1).
    pub fn quantile(&self, num: u64, den: u64) -> u64 {
        let buckets = self.buckets.iter().map(|e| ((e >> 48) as usize, e & COUNT_MASK));
        quantile_of(buckets, self.total, self.min, self.max, num, den)
    }

    /// Adds this histogram into a dense one (`counts` has [`BUCKETS`] entries).
    pub fn add_into(&self, dense: &mut DenseHist) {
        for e in &self.buckets {
            dense.counts[(e >> 48) as usize] += e & COUNT_MASK;
        }
        if self.total > 0 {
            dense.min = if dense.total == 0 { self.min } else { dense.min.min(self.min) };
            dense.max = dense.max.max(self.max);
            dense.total += self.total;
        }
    }
}

/// `⌈num·total/den⌉`, at least 1, without overflow.
fn rank(total: u64, num: u64, den: u64) -> u64 {
    let r = (u128::from(total) * u128::from(num)).div_ceil(u128::from(den.max(1)));
    (r as u64).clamp(1, total)
}

/// The same buckets, dense: all tasks' latencies merged (one per run, not per task).
pub struct DenseHist {
    counts: Vec<u64>,
    total: u64,
    min: u64,
    max: u64,
}

impl Default for DenseHist {
    fn default() -> Self {
        DenseHist { counts: vec![0; BUCKETS], total: 0, min: 0, max: 0 }
    }
}

impl DenseHist {
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }
    /// The value at quantile `num / den`, as [`LatencyHist::quantile`].
    pub fn quantile(&self, num: u64, den: u64) -> u64 {
        let buckets = self.counts.iter().copied().enumerate().filter(|&(_, c)| c > 0);
        quantile_of(buckets, self.total, self.min, self.max, num, den)
    }
}

/// The quantile walk both histograms share, over their non-empty `(bucket, count)` pairs in
/// bucket order: the smallest and the largest value are known exactly, any other rank is
/// its bucket's midpoint, clamped to them.
fn quantile_of(buckets: impl Iterator<Item = (usize, u64)>, total: u64, min: u64, max: u64, num: u64, den: u64) -> u64 {
    if total == 0 {
        return 0;
    }
    let rank = rank(total, num, den);
    if rank == total {
        return max;
    }
    if rank == 1 {
        return min;
    }
    let mut seen = 0;
    for (b, c) in buckets {
        seen += c;
        if seen >= rank {
            return midpoint(b).clamp(min, max);
        }
    }
    max
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotone_and_cover_u64() {
        let mut last = 0;
        for v in (0..100_000u64).chain([u64::MAX / 3, u64::MAX - 1, u64::MAX]) {
            let b = bucket(v);
            assert!(b >= last && b < BUCKETS, "{v}");
            last = b;
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn every_value_is_within_a_32nd_of_its_bucket_midpoint() {
        let mut v = 1u64;
        while v < u64::MAX / 2 {
            for x in [v, v + v / 3, v + v / 2, 2 * v - 1] {
                let m = midpoint(bucket(x));
                assert!(m.abs_diff(x) as u128 * 32 <= x as u128, "{x} -> {m}");
            }
            v *= 2;
        }
        for x in 0..16 {
            assert_eq!(midpoint(bucket(x)), x);
        }
    }

    #[test]
    fn quantiles_match_the_exact_ranks_within_a_32nd() {
        let mut h = LatencyHist::default();
        let values: Vec<u64> = (1..=1000u64).map(|i| i * i * 37 % 1_000_003 + 1).collect();
        values.iter().for_each(|&v| h.record(v));
        let mut sorted = values.clone();
        sorted.sort_unstable();
        for (num, den) in [(1, 2), (9, 10), (99, 100), (1, 1), (1, 100)] {
            let exact = sorted[(rank(1000, num, den) - 1) as usize];
            let got = h.quantile(num, den);
            assert!(got.abs_diff(exact) * 32 <= exact, "q {num}/{den}: {got} vs {exact}");
        }
        assert_eq!(h.quantile(1, 1), *sorted.last().unwrap());
        assert_eq!(h.max(), *sorted.last().unwrap());
        let mut d = DenseHist::default();
        h.add_into(&mut d);
        assert_eq!(d.quantile(9, 10), h.quantile(9, 10));
    }

    #[test]
    fn a_constant_latency_is_reported_exactly() {
        let mut h = LatencyHist::default();
        (0..50).for_each(|_| h.record(123_457));
        assert_eq!((h.quantile(1, 2), h.quantile(99, 100), h.max()), (123_457, 123_457, 123_457));
        assert_eq!(LatencyHist::default().quantile(1, 2), 0);
    }
}
