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
            return Err(self.err(
                ev.span().start,
                &join(field, "each"),
                "a poll variable is a plain name such as \"c\"",
            ));
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

#[cfg(test)]
mod tests {
    use crate::{parse_workload, Op};

    fn err(program: &str, extra: &str) -> String {
        let text = format!("[[pipe]]\nname = \"p\"\ncount = 2\n[[barrier]]\nname = \"b\"\nparties = 2\n{extra}[[task]]\nname = \"t\"\nprogram = [ {program} ]\n");
        parse_workload("w.toml", &text, &[], 4).unwrap_err().to_string()
    }

    #[test]
    fn bad_polls_marks_and_barriers_are_located_errors() {
        let e = err("{ poll = \"p.{c}\", count = 2, do = [ ] }", "");
        assert!(e.contains("w.toml:9:") && e.contains("missing required field `each`"), "{e}");
        let e = err("{ poll = \"p.{c}\", each = \"c\", count = 0, do = [ ] }", "");
        assert!(e.contains("task[0].program[0].count") && e.contains("1..=1024"), "{e}");
        let e = err("{ poll = \"p.{c}\", each = \"c\", count = 3, do = [ ] }", "");
        assert!(e.contains("undefined pipe `p.2`"), "{e}");
        let e = err("{ poll = \"p.{c}\", each = \"c c\", count = 2, do = [ ] }", "");
        assert!(e.contains("task[0].program[0].each"), "{e}");
        let e = err("{ mark_begin = \"\" }", "");
        assert!(e.contains("a span needs a name"), "{e}");
        let e = err("{ mark_end = \"x\", id = -1 }", "");
        assert!(e.contains("negative"), "{e}");
        let e = err("{ barrier = \"b\", spin_max = 5 }", "");
        assert!(e.contains("task[0].program[0].spin_max") && e.contains("missing unit"), "{e}");
        let e = err("{ barrier = \"b\", spin = \"1ms\" }", "");
        assert!(e.contains("only one verb"), "{e}");
        let e = err("\"yield\"", "[[daemon]]\npreset = \"kswapd\"\n");
        assert!(e.contains("daemon[0].preset") && e.contains("kworker, ksoftirqd, rcu"), "{e}");
        let e = err("\"yield\"", "[[daemon]]\npreset = \"rcu\"\nevery = \"0ms\"\n");
        assert!(e.contains("daemon[0].every"), "{e}");
        let e = err("\"yield\"", "[[pipe]]\nname = \"s\"\nkind = \"fifo\"\n");
        assert!(e.contains("pipe[1].kind") && e.contains("pipe or socket"), "{e}");
        let text = "[[task]]\nname = \"t\"\nper_cpu = true\ncount = 2\nprogram = [ \"yield\" ]\n";
        let e = parse_workload("w.toml", text, &[], 4).unwrap_err().to_string();
        assert!(e.contains("task[0].count") && e.contains("per_cpu"), "{e}");
        let text = "[[task]]\nname = \"t\"\nprocess = 2\nprogram = [ \"yield\" ]\n";
        let e = parse_workload("w.toml", text, &[], 4).unwrap_err().to_string();
        assert!(e.contains("task[0].process"), "{e}");
    }

    #[test]
    fn a_poll_lowers_to_one_arm_per_pipe_with_its_variable_bound() {
        let text = "[[pipe]]\nname = \"p\"\ncount = 3\n[[task]]\nname = \"t\"\nprogram = [ \
                    { poll = \"p.{2 - c}\", each = \"c\", count = 3, do = [ { recv = \"p.{2 - c}\", bytes = \"{c + 1}\" } ] }, \
                    { mark_begin = \"r\", id = 7 }, { mark_end = \"r\", id = 7 } ]\n";
        let wl = parse_workload("w.toml", text, &[], 1).unwrap();
        let prog = wl.program(0, 0).unwrap();
        assert_eq!(prog.polls.len(), 1);
        assert_eq!(prog.polls[0].pipes, [2, 1, 0]);
        let end = prog.ops.len() - 2;
        for (c, &arm) in prog.polls[0].arms.iter().enumerate() {
            assert_eq!(prog.ops[arm], Op::Recv { pipe: 2 - c, bytes: c as u64 + 1 });
            assert_eq!(prog.ops[arm + 1], Op::Jump(end));
        }
        assert_eq!(prog.ops[end], Op::MarkBegin { span: 0, id: 7 });
        assert_eq!(wl.spans, ["r"]);
    }

    #[test]
    fn daemons_expand_to_kernel_threads_one_per_cpu() {
        let text =
            "[[daemon]]\npreset = \"ksoftirqd\"\n[[daemon]]\npreset = \"kworker\"\nname = \"kw\"\nevery = \"5ms\"\n\
                    [[task]]\nname = \"t\"\nprogram = [ \"yield\" ]\n";
        let wl = parse_workload("w.toml", text, &[], 6).unwrap();
        let d = &wl.templates[1];
        assert!(d.kthread && d.per_cpu && d.count == 6 && d.name == "ksoftirqd");
        assert_eq!(wl.templates[2].name, "kw");
        assert!(!wl.templates[0].kthread);
    }
}
