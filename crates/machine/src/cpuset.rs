//! `CpuSet`: a machine-sized CPU bitmap (`cpumask_t`), shared copy-on-write.

use std::fmt;
use std::sync::Arc;

/// A set of CPUs (`cpumask_t`), a bitmap sized for the machine.
///
/// The bitmap is shared copy-on-write: every task's affinity is a clone of its template's
/// (or the machine's full set), so 100 000 tasks on 1024 CPUs do not hold 100 000 copies
/// of a 128-byte mask.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct CpuSet {
    words: Arc<[u64]>,
}

impl CpuSet {
    pub fn empty(nr_cpus: usize) -> Self {
        Self { words: vec![0; nr_cpus.div_ceil(64).max(1)].into() }
    }
    pub fn full(nr_cpus: usize) -> Self {
        let mut words = vec![0u64; nr_cpus.div_ceil(64).max(1)];
        for c in 0..nr_cpus {
            words[c / 64] |= 1 << (c % 64);
        }
        Self { words: words.into() }
    }
    pub fn single(nr_cpus: usize, cpu: usize) -> Self {
        let mut s = Self::empty(nr_cpus.max(cpu + 1));
        s.insert(cpu);
        s
    }
    pub fn insert(&mut self, cpu: usize) {
        let w = cpu / 64;
        if w >= self.words.len() {
            let mut v = self.words.to_vec();
            v.resize(w + 1, 0);
            self.words = v.into();
        }
        Arc::make_mut(&mut self.words)[w] |= 1 << (cpu % 64);
    }
    pub fn remove(&mut self, cpu: usize) {
        if let Some(w) = Arc::make_mut(&mut self.words).get_mut(cpu / 64) {
            *w &= !(1 << (cpu % 64));
        }
    }
    pub fn contains(&self, cpu: usize) -> bool {
        self.words.get(cpu / 64).is_some_and(|w| w & (1 << (cpu % 64)) != 0)
    }
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|w| *w == 0)
    }
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }
    /// CPUs in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(i * 64 + b)
            })
        })
    }
    pub fn first(&self) -> Option<usize> {
        self.iter().next()
    }
    /// The highest CPU number in the set, if any.
    pub fn last(&self) -> Option<usize> {
        self.iter().last()
    }
    /// `cpumask_and` in place.
    pub fn intersect_with(&mut self, o: &CpuSet) {
        for (i, w) in Arc::make_mut(&mut self.words).iter_mut().enumerate() {
            *w &= o.words.get(i).copied().unwrap_or(0);
        }
    }
    /// How many CPU numbers the bitmap can hold (a multiple of 64).
    pub fn len_bits(&self) -> usize {
        self.words.len() * 64
    }
    pub fn intersects(&self, o: &CpuSet) -> bool {
        self.words.iter().zip(o.words.iter()).any(|(a, b)| a & b != 0)
    }

    /// Parses a Linux cpulist: `"0-3,6,8-9"`.
    pub fn parse_list(s: &str) -> Result<CpuSet, String> {
        let mut set = CpuSet::empty(1);
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let num =
                |t: &str| t.trim().parse::<usize>().map_err(|_| format!("`{t}` is not a CPU number in cpu list `{s}`"));
            match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (num(a)?, num(b)?);
                    if b < a {
                        return Err(format!("descending range `{part}` in cpu list `{s}`"));
                    }
                    if b >= crate::MAX_CPUS {
                        return Err(format!("CPU {b} exceeds the limit of {} CPUs", crate::MAX_CPUS));
                    }
                    for c in a..=b {
                        set.insert(c);
                    }
                }
                None => {
                    let c = num(part)?;
                    if c >= crate::MAX_CPUS {
                        return Err(format!("CPU {c} exceeds the limit of {} CPUs", crate::MAX_CPUS));
                    }
                    set.insert(c);
                }
            }
        }
        if set.is_empty() {
            return Err(format!("empty cpu list `{s}`"));
        }
        Ok(set)
    }
}

impl fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{self}}}")
    }
}

impl fmt::Display for CpuSet {
    /// Linux cpulist format.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cpus: Vec<usize> = self.iter().collect();
        let mut i = 0;
        let mut first = true;
        while i < cpus.len() {
            let mut j = i;
            while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
                j += 1;
            }
            if !first {
                write!(f, ",")?;
            }
            first = false;
            if j > i {
                write!(f, "{}-{}", cpus[i], cpus[j])?;
            } else {
                write!(f, "{}", cpus[i])?;
            }
            i = j + 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn cpulist_round_trip() {
        let s = CpuSet::parse_list("0-3,6,8-9").unwrap();
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 1, 2, 3, 6, 8, 9]);
        assert_eq!(s.to_string(), "0-3,6,8-9");
        assert!(CpuSet::parse_list("3-1").is_err());
        assert!(CpuSet::parse_list("x").is_err());
        let mut big = CpuSet::empty(200);
        big.insert(130);
        assert_eq!(big.iter().collect::<Vec<_>>(), vec![130]);
    }
}
