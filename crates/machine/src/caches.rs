//! Caches and memory: the data the cache model charges refills from, and its pure
//! functions (footprint decay, refill bytes per level, the lines each source serves, the
//! refill time), each O(levels).
//!
//! The footprint model: a task's *footprint* at a level is the bytes of its working set held
//! at that level *or nearer the core* (Thiébaut and Stone, "Footprints in the cache", ACM
//! TOCS 5(4), 1987). With that meaning footprints nest (`F[0] ≤ F[1] ≤ …`) whatever the
//! inclusion policy; an exclusive or victim level adds its size to the nearer levels'
//! (the union holds that much, [`Caches::capacity`]), an inclusive one does not (its lines
//! include theirs, and evicting a line from it evicts the copies nearer the core).

use crate::spec::{Field, Kind, Table, Val};
use crate::Topology;
use schedlab_sim::Ns;

/// At most this many cache levels (L1d, L2, L3, L4).
pub const MAX_LEVELS: usize = 4;

/// Which CPUs share one instance of a level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheScope {
    /// One per core: its SMT siblings share it.
    Core,
    /// One per last-level-cache domain (`Topology`'s LLC): every core of the LLC shares it.
    Llc,
}

/// How a level's contents relate to the levels nearer the core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inclusion {
    /// Holds a copy of every line the nearer levels hold (Intel's L3 up to Skylake client).
    Inclusive,
    /// Holds only lines the nearer levels do not (AMD K10's L2 is exclusive of its L1).
    Exclusive,
    /// Filled only by lines the nearer levels evict (AMD K10's shared L3).
    Victim,
}

/// The closed form of footprint decay, by the level's replacement policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replacement {
    /// Random replacement with independent references: each line survives `b` insertions
    /// into `N` lines with probability `(1 − 1/N)^b ≈ e^{−b/N}`, so `F' = F·exp(−B/C)`
    /// (Thiébaut and Stone 1987).
    Random,
    /// LRU where everything the others brought in is newer than the task's lines:
    /// `F' = clamp(C − B, 0, F)`.
    Lru,
}

impl Replacement {
    /// The footprint `footprint` left after others brought `others` bytes into a cache of
    /// `capacity` bytes. Random: `F·exp(−B/C)` in Q62 fixed point ([`exp_neg`]), rounded
    /// down to whole bytes; LRU: `min(F, C − B)`, 0 once `B ≥ C`.
    pub fn decay(self, footprint: u64, others: u64, capacity: u64) -> u64 {
        match self {
            Replacement::Lru => footprint.min(capacity.saturating_sub(others)),
            Replacement::Random => {
                let s = exp_neg(others, capacity.max(1));
                ((u128::from(footprint) * s) >> Q) as u64
            }
        }
    }
}

/// Fixed-point shift of [`exp_neg`]'s result.
const Q: u32 = 62;
const ONE: u128 = 1 << Q;
/// Halvings of the argument before the series (`e^{−x} = (e^{−x/2^K})^{2^K}`).
const K: u32 = 20;

/// `e^{−num/den}` in Q62 (`1 << 62` = 1), deterministic integer arithmetic: the argument
/// is divided by 2^20, `e^{−y}` taken from its series to the cubic term (y ≤ 4.3·10⁻⁵, so the
/// next term is below 2^−62), then squared 20 times; relative error below 10⁻¹². Arguments
/// of 45 or more give 0 (e^{−45} < 2^−62).
pub fn exp_neg(num: u64, den: u64) -> u128 {
    let den = den.max(1);
    if num / den >= 45 {
        return 0;
    }
    let y = (u128::from(num) << Q) / (u128::from(den) << K);
    let y2 = (y * y) >> Q;
    let y3 = (y2 * y) >> Q;
    let mut r = ONE - y + y2 / 2 - y3 / 6;
    for _ in 0..K {
        r = (r * r) >> Q;
    }
    r
}

/// One cache level.
#[derive(Clone, Debug, PartialEq)]
pub struct CacheLevel {
    /// `L1d`, `L2`, `L3`.
    pub name: String,
    /// Bytes per instance.
    pub size: u64,
    /// Line size in bytes.
    pub line: u64,
    pub scope: CacheScope,
    /// Load-to-use latency of a hit, in picoseconds.
    pub latency_ps: u64,
    pub inclusion: Inclusion,
    pub replacement: Replacement,
    /// Bytes per second one core can pull from this level; `None`: latency-bound only.
    pub bandwidth: Option<u64>,
}

/// Local memory as one core sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Memory {
    /// Load latency of a line from local DRAM (an LLC miss), in picoseconds.
    pub latency_ps: u64,
    /// Bytes per second one core can pull from memory.
    pub bandwidth: u64,
    /// The most independent misses one core keeps in flight (line-fill buffers): the
    /// memory-level parallelism a refill gets when the workload says nothing narrower.
    pub mlp: u32,
}

/// The cache hierarchy (the same for every CPU) and memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Caches {
    /// Nearest the core first; empty: no cache model.
    pub levels: Vec<CacheLevel>,
    pub memory: Memory,
}

/// What one resume must bring back, and from where.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Refill {
    /// Bytes each level must bring back: its full footprint `min(W, capacity)` less what
    /// survived.
    pub bytes: [u64; MAX_LEVELS],
    /// Lines each source serves: `lines[j]` from level `j` (`lines[0]` is always 0: the
    /// nearest level serves nothing to itself), `lines[levels]` from memory.
    pub lines: [u64; MAX_LEVELS + 1],
    pub levels: usize,
}

/// Where refill lines come from, for [`refill_time_ns`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Source {
    pub lines: u64,
    pub line_bytes: u64,
    pub latency_ps: u64,
    /// Bytes per second; `None`: latency-bound only.
    pub bandwidth: Option<u64>,
}

/// The time to fetch every source's lines: `Σ max(N·L/MLP, N·line/BW)`. Each term is
/// computed in whole picoseconds (truncated), the sum rounded to the nearest nanosecond
/// (halves up). `mlp` 0 is taken as 1.
pub fn refill_time_ns(sources: &[Source], mlp: u32) -> Ns {
    let mlp = u128::from(mlp.max(1));
    let mut ps: u128 = 0;
    for s in sources {
        let n = u128::from(s.lines);
        let by_latency = n * u128::from(s.latency_ps) / mlp;
        let by_bandwidth =
            s.bandwidth.map_or(0, |bw| n * u128::from(s.line_bytes) * 1_000_000_000_000 / u128::from(bw.max(1)));
        ps += by_latency.max(by_bandwidth);
    }
    Ns(u64::try_from((ps + 500) / 1000).unwrap_or(u64::MAX))
}

impl Caches {
    /// The bytes level `l` and the levels nearer the core hold together: its size, plus
    /// the nearer levels' capacity when it is exclusive or a victim cache.
    pub fn capacity(&self, l: usize) -> u64 {
        let lv = &self.levels[l];
        match (lv.inclusion, l) {
            (Inclusion::Inclusive, _) | (_, 0) => lv.size,
            _ => lv.size.saturating_add(self.capacity(l - 1)),
        }
    }

    /// A task's footprint at level `l` after others brought `others` bytes into it, by the
    /// level's replacement form over its [`Caches::capacity`].
    pub fn decay(&self, l: usize, footprint: u64, others: u64) -> u64 {
        self.levels[l].replacement.decay(footprint, others, self.capacity(l))
    }

    /// Keeps footprints nested after decay: a level nearer the core holds no more than the
    /// level beyond it (for an inclusive level, its evictions back-invalidate the nearer
    /// copies; otherwise the union semantics make it so).
    pub fn nest(&self, footprints: &mut [u64]) {
        for l in (1..footprints.len().min(self.levels.len())).rev() {
            footprints[l - 1] = footprints[l - 1].min(footprints[l]);
        }
    }

    /// What a task with working set `ws` must refill given its (nested) `footprints` per
    /// level. Level `l` wants `W_l = min(ws, capacity(l))` and has `F_l`; it must bring back
    /// `W_l − F_l`. Each line is fetched once, from the nearest level that still holds it:
    /// level `j` serves the lines of `W_{j−1}` it holds beyond `F_{j−1}` — its survivors among
    /// `W_{j−1}` are `min(W_{j−1}, F_j)` under LRU (both are the most recent lines) and
    /// `W_{j−1}·F_j/W_j` under random replacement (survivors spread evenly) — and memory the
    /// `W_last − F_last` no level holds. Lines are bytes over the serving level's line size,
    /// rounded up.
    pub fn refill(&self, ws: u64, footprints: &[u64]) -> Refill {
        let n = self.levels.len().min(MAX_LEVELS);
        let mut r = Refill { levels: n, ..Refill::default() };
        if n == 0 {
            return r;
        }
        let mut want = [0u64; MAX_LEVELS];
        let mut have = [0u64; MAX_LEVELS];
        for l in 0..n {
            want[l] = ws.min(self.capacity(l));
            have[l] = footprints.get(l).copied().unwrap_or(0).min(want[l]);
        }
        self.nest(&mut have[..n]);
        for l in 0..n {
            r.bytes[l] = want[l] - have[l];
        }
        for j in 1..n {
            let held = match self.levels[j].replacement {
                Replacement::Lru => want[j - 1].min(have[j]),
                Replacement::Random if want[j] > 0 => {
                    (u128::from(want[j - 1]) * u128::from(have[j]) / u128::from(want[j])) as u64
                }
                Replacement::Random => 0,
            };
            r.lines[j] = held.saturating_sub(have[j - 1]).div_ceil(self.levels[j].line);
        }
        r.lines[n] = (want[n - 1] - have[n - 1]).div_ceil(self.levels[n - 1].line);
        r
    }

    /// [`refill_time_ns`] of a refill: each level at its latency and bandwidth, memory at
    /// `memory_latency_ps` (the local latency, or a remote node's from
    /// [`crate::Machine::memory_latency_ps`]) and the memory bandwidth.
    pub fn refill_time(&self, r: &Refill, mlp: u32, memory_latency_ps: u64) -> Ns {
        let mut src = [Source { lines: 0, line_bytes: 64, latency_ps: 0, bandwidth: None }; MAX_LEVELS + 1];
        for (j, lv) in self.levels.iter().enumerate().take(r.levels).skip(1) {
            src[j] =
                Source { lines: r.lines[j], line_bytes: lv.line, latency_ps: lv.latency_ps, bandwidth: lv.bandwidth };
        }
        if r.levels > 0 {
            src[r.levels] = Source {
                lines: r.lines[r.levels],
                line_bytes: self.levels[r.levels - 1].line,
                latency_ps: memory_latency_ps,
                bandwidth: Some(self.memory.bandwidth),
            };
        }
        refill_time_ns(&src[..=r.levels], mlp)
    }

    /// The sum of the per-core levels' sizes (one core's private caches).
    pub fn private_bytes(&self) -> u64 {
        self.levels.iter().filter(|l| l.scope == CacheScope::Core).map(|l| l.size).sum()
    }

    /// The checks a machine file's caches must pass: `(field, reason)` on failure.
    pub fn check(&self, topo: &Topology) -> Result<(), (String, String)> {
        let bad = |i: usize, f: &str, m: String| Err((format!("cache[{i}].{f}"), m));
        if self.levels.len() > MAX_LEVELS {
            return bad(MAX_LEVELS, "name", format!("at most {MAX_LEVELS} cache levels"));
        }
        for (i, lv) in self.levels.iter().enumerate() {
            if self.levels[..i].iter().any(|o| o.name == lv.name) {
                return bad(i, "name", format!("two levels are named `{}`", lv.name));
            }
            if !lv.line.is_power_of_two() {
                return bad(i, "line", format!("line size {} is not a power of two", lv.line));
            }
            if lv.size % lv.line != 0 {
                return bad(i, "size", format!("size {} is not a whole number of {}-byte lines", lv.size, lv.line));
            }
            if i > 0 {
                let prev = &self.levels[i - 1];
                if prev.scope == CacheScope::Llc && lv.scope == CacheScope::Core {
                    return bad(i, "scope", "a per-core level cannot lie beyond a shared (llc) level".into());
                }
                if lv.latency_ps <= prev.latency_ps {
                    return bad(i, "latency", format!("must exceed {}'s latency", prev.name));
                }
                if self.capacity(i) <= self.capacity(i - 1) {
                    return bad(
                        i,
                        "size",
                        format!("the level must hold more than {} and the levels before it", prev.name),
                    );
                }
            }
            if lv.scope == CacheScope::Llc && lv.inclusion == Inclusion::Inclusive {
                let privates = self.private_bytes().saturating_mul(topo.cores_per_llc as u64);
                if lv.size < privates {
                    return bad(
                        i,
                        "size",
                        format!(
                        "an inclusive shared level holds every line of its {} cores' private caches ({privates} bytes)",
                        topo.cores_per_llc
                    ),
                    );
                }
            }
        }
        if let Some(last) = self.levels.last() {
            if self.memory.latency_ps <= last.latency_ps {
                return Err(("memory.latency".into(), format!("must exceed {}'s latency", last.name)));
            }
        }
        Ok(())
    }
}

/// Work rate, in permille of full speed, of a task whose memory is `distance` away (SLIT,
/// 10 = local) and that spends `intensity` permille of its local-memory run time stalled on
/// DRAM: its run time grows by `intensity × (distance/10 − 1)`, so the rate is
/// `10⁶ / (1000 + intensity × (distance − 10) / 10)`, each division truncated (a model from
/// the SLIT's meaning as relative latency, not a kernel formula).
pub fn numa_rate_permille(intensity: u32, distance: u32) -> u32 {
    let slow = 1000 + u64::from(intensity.min(1000)) * u64::from(distance.saturating_sub(10)) / 10;
    (1_000_000 / slow) as u32
}

/// The choices' spellings, in enum order.
const SCOPES: &[&str] = &["core", "llc"];
const INCLUSIONS: &[&str] = &["inclusive", "exclusive", "victim"];
const REPLACEMENTS: &[&str] = &["random", "lru"];

fn scope_of(i: u64) -> CacheScope {
    [CacheScope::Core, CacheScope::Llc][i as usize % 2]
}
fn inclusion_of(i: u64) -> Inclusion {
    [Inclusion::Inclusive, Inclusion::Exclusive, Inclusion::Victim][i as usize % 3]
}
fn replacement_of(i: u64) -> Replacement {
    [Replacement::Random, Replacement::Lru][i as usize % 2]
}

/// One `[[cache]]` level's fields.
pub static CACHE_LEVEL: Table<CacheLevel> = Table {
    section: "cache",
    what: "cache field",
    fields: &[
        Field {
            name: "name",
            kind: Kind::Name,
            optional: false,
            doc: "The level's name (`L1d`, `L2`, `L3`), used in dotted names: `cache.L2.size`.",
            get: |c| Val::Text(c.name.clone()),
            set: |c, v| c.name = v.text(),
        },
        Field {
            name: "size",
            kind: Kind::Bytes { min: 1 << 10, max: 1 << 32 },
            optional: false,
            doc: "Bytes per instance (one per core, or one per LLC).",
            get: |c| Val::Num(c.size),
            set: |c, v| c.size = v.num(),
        },
        Field {
            name: "line",
            kind: Kind::Int { min: 16, max: 1024, unit: "bytes" },
            optional: false,
            doc: "Line size in bytes (a power of two).",
            get: |c| Val::Num(c.line),
            set: |c, v| c.line = v.num(),
        },
        Field {
            name: "scope",
            kind: Kind::Choice(SCOPES),
            optional: false,
            doc: "`core`: one per core, shared by its SMT threads; `llc`: one per LLC, shared by its cores.",
            get: |c| Val::Num(c.scope as u64),
            set: |c, v| c.scope = scope_of(v.num()),
        },
        Field {
            name: "latency",
            kind: Kind::Fine { max_ps: 1_000_000 },
            optional: false,
            doc: "Load-to-use latency of a hit (`1.2ns`), at most 1 µs.",
            get: |c| Val::Num(c.latency_ps),
            set: |c, v| c.latency_ps = v.num(),
        },
        Field {
            name: "inclusion",
            kind: Kind::Choice(INCLUSIONS),
            optional: false,
            doc: "Relative to the levels nearer the core: `inclusive` (holds their lines too), `exclusive` (holds none of them), `victim` (filled by their evictions). Exclusive and victim levels add the nearer levels' capacity to their own.",
            get: |c| Val::Num(c.inclusion as u64),
            set: |c, v| c.inclusion = inclusion_of(v.num()),
        },
        Field {
            name: "replacement",
            kind: Kind::Choice(REPLACEMENTS),
            optional: false,
            doc: "Footprint decay form: `random` F·exp(−B/C) (Thiébaut and Stone 1987) or `lru` clamp(C−B, 0, F).",
            get: |c| Val::Num(c.replacement as u64),
            set: |c, v| c.replacement = replacement_of(v.num()),
        },
        Field {
            name: "bandwidth",
            kind: Kind::Rate { min: 1_000_000, max: 10_000_000_000_000 },
            optional: true,
            doc: "Bytes per second one core pulls from this level (`40GB/s`); `none`: latency-bound only.",
            get: |c| Val::of_opt(c.bandwidth),
            set: |c, v| c.bandwidth = v.opt(),
        },
    ],
};

/// `[memory]`.
pub static MEMORY: Table<Memory> = Table {
    section: "memory",
    what: "memory field",
    fields: &[
        Field {
            name: "latency",
            kind: Kind::Fine { max_ps: 10_000_000 },
            optional: false,
            doc: "Load latency of a line from local DRAM (an LLC miss), at most 10 µs; a remote node's is this × its SLIT distance / 10.",
            get: |m| Val::Num(m.latency_ps),
            set: |m, v| m.latency_ps = v.num(),
        },
        Field {
            name: "bandwidth",
            kind: Kind::Rate { min: 1_000_000, max: 10_000_000_000_000 },
            optional: false,
            doc: "Bytes per second one core pulls from memory (`9.8GB/s`).",
            get: |m| Val::Num(m.bandwidth),
            set: |m, v| m.bandwidth = v.num(),
        },
        Field {
            name: "mlp",
            kind: Kind::Int { min: 1, max: 64, unit: "misses" },
            optional: false,
            doc: "Independent misses one core keeps in flight (line-fill buffers): a refill's memory-level parallelism unless the workload gives its own.",
            get: |m| Val::Num(u64::from(m.mlp)),
            set: |m, v| m.mlp = v.num() as u32,
        },
    ],
};

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1 << 10;
    const MIB: u64 = 1 << 20;

    fn level(
        name: &str,
        size: u64,
        latency_ps: u64,
        scope: CacheScope,
        inclusion: Inclusion,
        r: Replacement,
    ) -> CacheLevel {
        CacheLevel { name: name.into(), size, line: 64, scope, latency_ps, inclusion, replacement: r, bandwidth: None }
    }

    /// The i7-3770's hierarchy with the L3 replacement form `r`.
    fn ivb(r: Replacement) -> Caches {
        Caches {
            levels: vec![
                level("L1d", 32 * KIB, 1_200, CacheScope::Core, Inclusion::Inclusive, Replacement::Lru),
                level("L2", 256 * KIB, 3_500, CacheScope::Core, Inclusion::Inclusive, Replacement::Lru),
                level("L3", 8 * MIB, 8_800, CacheScope::Llc, Inclusion::Inclusive, r),
            ],
            memory: Memory { latency_ps: 65_000, bandwidth: 9_800_000_000, mlp: 10 },
        }
    }

    #[test]
    fn exp_neg_matches_the_exponential() {
        for (num, den) in [(0u64, 1u64), (1, 4), (3, 4), (1, 1), (5, 2), (10, 1), (44, 1), (6 * MIB, 8 * MIB)] {
            let want = (-(num as f64) / den as f64).exp();
            let got = exp_neg(num, den) as f64 / ONE as f64;
            assert!((got - want).abs() <= want * 1e-12 + 1e-18, "e^-{num}/{den}: {got} vs {want}");
        }
        assert_eq!(exp_neg(0, 1), ONE);
        assert_eq!(exp_neg(45, 1), 0);
        assert_eq!(exp_neg(u64::MAX, 1), 0);
    }

    /// machine-costs §3.3: the other 6 MiB task leaves 8 − 6 = 2 MiB (LRU) or
    /// 6 × e^−0.75 = 2.834 MiB (random) of a 6 MiB footprint in the 8 MiB L3.
    #[test]
    fn decay_forms_give_the_analytical_survivors() {
        assert_eq!(Replacement::Lru.decay(6 * MIB, 6 * MIB, 8 * MIB), 2 * MIB);
        assert_eq!(Replacement::Lru.decay(MIB, 6 * MIB, 8 * MIB), MIB, "clamped at the footprint");
        assert_eq!(Replacement::Lru.decay(6 * MIB, 9 * MIB, 8 * MIB), 0);
        let random = Replacement::Random.decay(6 * MIB, 6 * MIB, 8 * MIB);
        let want = 6.0 * MIB as f64 * (-0.75f64).exp();
        assert!((random as f64 - want).abs() < 1.0, "{random} vs {want}");
        assert_eq!(Replacement::Random.decay(6 * MIB, 0, 8 * MIB), 6 * MIB);
    }

    /// Two 6 MiB tasks alternating on one core (machine-costs §3.3), LRU L3: the L3 keeps
    /// 2 MiB, L1 and L2 are flushed. Memory serves the 4 MiB the L3 lost (65 536 lines); the
    /// L3 serves what the L2 wants of its survivors (256 KiB, 4096 lines).
    #[test]
    fn refill_of_two_alternating_6mib_tasks() {
        let c = ivb(Replacement::Lru);
        let mut f = [0, 0, c.decay(2, 6 * MIB, 6 * MIB)];
        c.nest(&mut f);
        let r = c.refill(6 * MIB, &f);
        assert_eq!(r.bytes[..3], [32 * KIB, 256 * KIB, 4 * MIB]);
        assert_eq!(r.lines[..4], [0, 0, 4096, 65_536]);
        // MLP 1: 4096 × 8.8 ns + 65 536 × 65 ns = 36 044.8 + 4 259 840 ns.
        assert_eq!(c.refill_time(&r, 1, 65_000), Ns(4_295_885));
        // MLP 10: the L3 term is 3604.48 ns; memory becomes bandwidth-bound (65 536 × 64 B
        // at 9.8 GB/s = 427.99 µs, above the 425.98 µs of 65 536 × 65 ns / 10).
        let bw_ps = 65_536u128 * 64 * 1_000_000_000_000 / 9_800_000_000;
        assert!(bw_ps > 425_984_000);
        let want = (3_604_480u128 + bw_ps + 500) / 1000;
        assert_eq!(c.refill_time(&r, 10, 65_000), Ns(want as u64));
    }

    #[test]
    fn refill_with_random_replacement_spreads_survivors() {
        let c = ivb(Replacement::Random);
        let f3 = c.decay(2, 6 * MIB, 6 * MIB);
        let r = c.refill(6 * MIB, &[0, 0, f3]);
        assert_eq!(r.bytes[2], 6 * MIB - f3);
        assert_eq!(r.lines[3], (6 * MIB - f3).div_ceil(64));
        assert_eq!(r.lines[2], (256 * KIB * f3 / (6 * MIB)).div_ceil(64), "L2's share of the L3 survivors");
    }

    /// Working sets that fit the core's caches together pay nothing; a migration (no
    /// footprint at all) refetches everything from memory once, not once per level.
    #[test]
    fn warm_tasks_refill_nothing_and_cold_ones_fetch_each_line_once() {
        let c = ivb(Replacement::Random);
        let ws = 100 * KIB;
        let warm = [32 * KIB, ws, ws];
        let r = c.refill(ws, &warm);
        assert_eq!(r.lines, [0; MAX_LEVELS + 1]);
        assert_eq!(c.refill_time(&r, 1, 65_000), Ns(0));
        let cold = c.refill(ws, &[0, 0, 0]);
        // Footprints that do not nest are nested first: an L1 footprint beyond what the
        // (inclusive) L3 holds is not there.
        assert_eq!(c.refill(ws, &[32 * KIB, 32 * KIB, 0]), cold);
        assert_eq!(cold.lines[..4], [0, 0, 0, ws / 64]);
        // A switch that flushed only L1 and L2: the L3 serves all of L2's footprint.
        let l3_warm = c.refill(ws, &[0, 0, ws]);
        assert_eq!(l3_warm.lines[..4], [0, 0, ws / 64, 0]);
    }

    /// AMD K10 (Opteron 6172): L2 exclusive of L1, L3 a victim cache, so one core's union
    /// holds 64 + 512 KiB privately and 5 MiB + 576 KiB with the L3.
    #[test]
    fn exclusive_and_victim_levels_add_capacity() {
        let c = Caches {
            levels: vec![
                level("L1d", 64 * KIB, 1_430, CacheScope::Core, Inclusion::Inclusive, Replacement::Lru),
                level("L2", 512 * KIB, 7_620, CacheScope::Core, Inclusion::Exclusive, Replacement::Lru),
                level("L3", 5 * MIB, 27_140, CacheScope::Llc, Inclusion::Victim, Replacement::Random),
            ],
            memory: Memory { latency_ps: 98_000, bandwidth: 2_400_000_000, mlp: 8 },
        };
        assert_eq!(c.capacity(1), 576 * KIB);
        assert_eq!(c.capacity(2), 5 * MIB + 576 * KIB);
        let topo = Topology::new(1, 1, 6, 1, None);
        assert_eq!(c.check(&topo), Ok(()));
    }

    #[test]
    fn checks_refuse_what_the_model_cannot_mean() {
        let topo = Topology::new(1, 1, 4, 2, None);
        let mut c = ivb(Replacement::Random);
        assert_eq!(c.check(&topo), Ok(()));
        c.levels[2].size = MIB;
        let (field, msg) = c.check(&topo).unwrap_err();
        assert_eq!(field, "cache[2].size");
        assert!(msg.contains("private caches"), "{msg}");
        let mut c = ivb(Replacement::Random);
        c.levels[1].latency_ps = 1_000;
        assert_eq!(c.check(&topo).unwrap_err().0, "cache[1].latency");
        let mut c = ivb(Replacement::Random);
        c.levels[0].line = 48;
        assert_eq!(c.check(&topo).unwrap_err().0, "cache[0].line");
        let mut c = ivb(Replacement::Random);
        c.memory.latency_ps = 5_000;
        assert_eq!(c.check(&topo).unwrap_err().0, "memory.latency");
    }

    #[test]
    fn remote_memory_slows_by_distance_and_intensity() {
        assert_eq!(numa_rate_permille(0, 22), 1000, "not memory-bound: no slowdown");
        assert_eq!(numa_rate_permille(1000, 10), 1000, "local");
        assert_eq!(numa_rate_permille(1000, 20), 500, "fully memory-bound, twice the latency");
        assert_eq!(numa_rate_permille(500, 16), 1_000_000 / 1300, "1 + 0.5 × 0.6");
    }

    #[test]
    fn refill_time_rounds_once_to_the_nearest_ns() {
        let s = |lines, latency_ps| Source { lines, line_bytes: 64, latency_ps, bandwidth: None };
        assert_eq!(refill_time_ns(&[s(1, 1_499)], 1), Ns(1));
        assert_eq!(refill_time_ns(&[s(1, 1_500)], 1), Ns(2));
        assert_eq!(refill_time_ns(&[s(1, 700), s(1, 800)], 1), Ns(2), "summed before rounding");
        assert_eq!(refill_time_ns(&[s(10, 1_000)], 0), Ns(10), "mlp 0 is 1");
        let bw = Source { lines: 1000, line_bytes: 64, latency_ps: 1_000, bandwidth: Some(6_400_000_000) };
        assert_eq!(refill_time_ns(&[bw], 10), Ns(10_000), "bandwidth-bound: 64 kB at 6.4 GB/s");
    }
}
