//! `[[pipe]]`, `[[mutex]]`, `[[cond]]` and `[[barrier]]`: the kernel objects programs name.
//! A table with `count = K` declares `name.0` … `name.K-1`.

use super::{join, DeValue, P, R, V};
use crate::{BarrierDef, PipeDef, MAX_TASKS};
use std::collections::BTreeSet;
use toml::de::DeTable;

/// A pipe's buffer by default: 16 pages (`fs/pipe.c: PIPE_DEF_BUFFERS`).
pub const PIPE_CAPACITY: u64 = 65_536;
/// An `AF_UNIX` socket's send buffer by default: `net.core.wmem_default` (`SK_WMEM_MAX`,
/// 212 992 bytes). The kernel also counts each message's `sk_buff` overhead against it, which
/// the model leaves out (set `capacity` to account for it).
pub const SOCKET_CAPACITY: u64 = 212_992;

/// The declared objects of the four kinds, in declaration order.
#[derive(Default)]
pub(super) struct Objects {
    pub pipes: Vec<PipeDef>,
    pub mutexes: Vec<String>,
    pub conds: Vec<String>,
    pub barriers: Vec<BarrierDef>,
}

/// The table kinds, in the order they are read.
const KINDS: [&str; 4] = ["pipe", "mutex", "cond", "barrier"];

impl<'a> P<'a> {
    /// Every `[[pipe]]`, `[[mutex]]`, `[[cond]]` and `[[barrier]]`; a name declared twice
    /// within a kind is an error.
    pub(super) fn objects(&self, root: &DeTable<'a>) -> R<Objects> {
        let mut out = Objects::default();
        let mut seen = BTreeSet::new();
        for kind in KINDS {
            let Some(v) = self.get(root, kind) else { continue };
            let DeValue::Array(items) = v.get_ref() else {
                return Err(self.err(v.span().start, kind, format!("expected `[[{kind}]]` tables")));
            };
            for (i, item) in items.iter().enumerate() {
                self.object(kind, i, item, &mut seen, &mut out)?;
            }
        }
        Ok(out)
    }

    /// Table `i` of `kind`: its names, each checked against those `seen`.
    fn object(
        &self,
        kind: &'static str,
        i: usize,
        item: &V<'a>,
        seen: &mut BTreeSet<(&'static str, String)>,
        out: &mut Objects,
    ) -> R<()> {
        let f = format!("{kind}[{i}]");
        let t = self.table(item, &f)?;
        let keys: &[&str] = match kind {
            "pipe" => &["name", "count", "capacity", "kind"],
            "barrier" => &["name", "count", "parties"],
            _ => &["name", "count"],
        };
        self.check_keys(t, keys, &f)?;
        let base = self.string(self.require(t, "name", item.span().start, &f)?, &join(&f, "name"))?;
        let count = match self.get(t, "count") {
            Some(c) => Some(self.nonneg(c, &join(&f, "count"))?),
            None => None,
        };
        if count.unwrap_or(1) > MAX_TASKS {
            return Err(self.err(item.span().start, &join(&f, "count"), format!("more than {MAX_TASKS} objects")));
        }
        let names: Vec<String> = match count {
            Some(c) => (0..c).map(|k| format!("{base}.{k}")).collect(),
            None => vec![base],
        };
        for n in names {
            self.step()?;
            if !seen.insert((kind, n.clone())) {
                return Err(self.err(item.span().start, &join(&f, "name"), format!("{kind} `{n}` is declared twice")));
            }
            match kind {
                "pipe" => out.pipes.push(self.pipe(t, item, &f, n)?),
                "mutex" => out.mutexes.push(n),
                "cond" => out.conds.push(n),
                _ => out.barriers.push(self.barrier(t, item, &f, n)?),
            }
        }
        Ok(())
    }

    /// A pipe named `name` of `[[pipe]]` table `t`.
    fn pipe(&self, t: &DeTable<'a>, item: &V<'a>, f: &str, name: String) -> R<PipeDef> {
        let socket = self.pipe_kind(t, f)?;
        let capacity = match self.get(t, "capacity") {
            Some(c) => self.nonneg(c, &join(f, "capacity"))?,
            None if socket => SOCKET_CAPACITY,
            None => PIPE_CAPACITY,
        };
        if capacity == 0 {
            return Err(self.err(item.span().start, &join(f, "capacity"), "capacity must be > 0"));
        }
        Ok(PipeDef { name, capacity, socket })
    }

    /// `kind = "pipe" | "socket"` of a `[[pipe]]` (a parameter may stand for it).
    fn pipe_kind(&self, t: &DeTable<'a>, field: &str) -> R<bool> {
        let Some(v) = self.get(t, "kind") else { return Ok(false) };
        match self.string(v, &join(field, "kind"))?.as_str() {
            "pipe" => Ok(false),
            "socket" => Ok(true),
            o => Err(self.err(
                v.span().start,
                &join(field, "kind"),
                format!("unknown kind `{o}`; expected pipe or socket"),
            )),
        }
    }

    /// A barrier named `name` of `[[barrier]]` table `t`.
    fn barrier(&self, t: &DeTable<'a>, item: &V<'a>, f: &str, name: String) -> R<BarrierDef> {
        let parties = self.nonneg(self.require(t, "parties", item.span().start, f)?, &join(f, "parties"))?;
        if parties == 0 {
            return Err(self.err(item.span().start, &join(f, "parties"), "parties must be > 0"));
        }
        Ok(BarrierDef { name, parties })
    }
}
