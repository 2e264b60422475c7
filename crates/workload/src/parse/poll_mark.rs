//! The `poll` and `mark_begin`/`mark_end` operations.

use super::{join, AstOp, IntSrc, P, R, V};
use crate::lower::MAX_POLL_PIPES;
use toml::de::DeTable;

/// Most spans one task may have open at once (each is remembered until its `mark_end`).
pub const MAX_OPEN_SPANS: usize = 4096;
/// Most distinct span names in a workload.
pub const MAX_SPAN_NAMES: usize = 256;

impl P<'_> {
    /// `{ poll = "resp.{c}", each = "c", count = N, do = [ … ] }`: wait until any of the
    /// pipes `resp.0` … `resp.{N-1}` is readable, then run `do` with `c` bound to the first
    /// readable one (in index order, as `do_poll` scans its fds).
    pub(super) fn poll(&self, t: &DeTable<'_>, val: &V, at: usize, field: &str) -> R<AstOp> {
        let f = join(field, "poll");
        let pipe = self.string(val, &f)?;
        let ev = self.require(t, "each", at, field)?;
        let var = self.string(ev, &join(field, "each"))?;
        if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(self.err(ev.span().start, &join(field, "each"), "a poll variable is a plain name such as \"c\""));
        }
        let cv = self.require(t, "count", at, field)?;
        let count = self.int_src(cv, &join(field, "count"))?;
        if let IntSrc::Const(c) = count {
            if c < 1 || c as u64 > MAX_POLL_PIPES {
                return Err(self.err(
                    cv.span().start,
                    &join(field, "count"),
                    format!("poll watches 1..={MAX_POLL_PIPES} pipes, not {c}"),
                ));
            }
        }
        let body = self.body(t, at, field)?;
        Ok(AstOp::Poll { pipe, var, count, body })
    }

    /// A span name: a plain string, given an index in order of first mention.
    pub(super) fn span(&self, v: &V, field: &str) -> R<usize> {
        let name = self.string(v, field)?;
        if name.is_empty() {
            return Err(self.err(v.span().start, field, "a span needs a name"));
        }
        let mut spans = self.spans.borrow_mut();
        if let Some(i) = spans.iter().position(|s| *s == name) {
            return Ok(i);
        }
        if spans.len() >= MAX_SPAN_NAMES {
            return Err(self.err(v.span().start, field, format!("more than {MAX_SPAN_NAMES} span names")));
        }
        spans.push(name);
        Ok(spans.len() - 1)
    }
}
