//! The waits added for the ULE-vs-CFS and runqueue-lock studies: libgomp's spinning barrier,
//! `poll` on several pipes, and the named spans (`mark_begin`/`mark_end`) that time requests.

use crate::vocab::{Action, Flow, FutexKey, Step};
use crate::{BlockedOn, Kernel, ProbeEvent};
use schedlab_machine::KernelPath;
use schedlab_sched_api::wf;
use schedlab_sim::{CpuId, Ns, TaskId};
use schedlab_workload::{Op, MAX_OPEN_SPANS};

/// `op_phase` of a spinning-barrier op: arriving, spinning, asleep on the futex.
const ARRIVE: u8 = 0;
const SPINNING: u8 = 1;
const FUTEX: u8 = 2;

impl Kernel<'_> {
    /// libgomp `gomp_barrier_wait` (`config/linux/bar.c`, `wait.h: do_wait`): the last party
    /// bumps the generation and `futex_wake`s everyone; the others spin on the generation
    /// for up to `spin` of CPU time (`GOMP_SPINCOUNT` iterations; a preempted spinner does
    /// not count time off the CPU), then `futex_wait` on it. A spinner running when the
    /// generation changes sees it one cache-line transfer later.
    pub(crate) fn spin_barrier(&mut self, cpu: CpuId, t: TaskId, b: usize, spin: Ns, steps: &mut Vec<Step>) -> Flow {
        let key = FutexKey::Barrier(b);
        if self.tasks[t].op_phase == ARRIVE {
            let bar = &mut self.objs.barriers[b];
            bar.arrived += 1;
            if bar.arrived == bar.parties {
                bar.arrived = 0;
                bar.gen += 1;
                let alone = bar.parties == 1;
                let spinners = std::mem::take(&mut bar.spinners);
                self.next_op(t);
                self.tell_spinners(cpu, spinners);
                if alone {
                    return Flow::Continue;
                }
                steps.extend(self.futex_wake_steps(key, u64::MAX));
                return Flow::Kernel;
            }
            let g = bar.gen;
            bar.spinners.push(t);
            let task = &mut self.tasks[t];
            task.op_aux = g;
            task.op_phase = SPINNING;
            task.op_left = Some(spin);
        }
        let task = &mut self.tasks[t];
        let seen = self.objs.barriers[b].gen != task.op_aux;
        if seen {
            self.objs.barriers[b].spinners.retain(|&s| s != t);
            self.next_op(t);
            return Flow::Continue;
        }
        let left = task.op_left.unwrap_or(Ns(0));
        if task.op_phase == SPINNING && left.0 > 0 {
            self.start_user(cpu, left, false);
            return Flow::User;
        }
        if task.op_phase == SPINNING {
            task.op_phase = FUTEX;
            task.op_left = None;
            self.objs.barriers[b].spinners.retain(|&s| s != t);
        }
        let g = self.tasks[t].op_aux;
        steps.extend(self.futex_wait_steps(t, key, g));
        Flow::Kernel
    }

    /// The generation changed: spinners on a CPU right now stop after the line moves to
    /// them; the others see it when they next run.
    fn tell_spinners(&mut self, cpu: CpuId, spinners: Vec<TaskId>) {
        for s in spinners {
            let c = self.info[s].cpu;
            if self.cpus[c].curr == Some(s) && self.tasks[s].op_phase == SPINNING {
                let after = self.machine.line_ns(cpu, c);
                self.cut_user(c, after);
            }
        }
    }

    /// A spinning barrier's user work ended: the whole bound was spun (or the spin was cut
    /// short, which the op sees from the generation).
    pub(crate) fn spin_done(&mut self, t: TaskId) {
        self.tasks[t].op_left = Some(Ns(0));
    }

    /// `poll(2)` (`fs/select.c: do_sys_poll`): syscall entry and a scan of every pipe; a
    /// task woken from `poll` rescans inside the same call.
    pub(crate) fn poll_op(&mut self, t: TaskId, set: usize, steps: &mut Vec<Step>) {
        let task = &self.tasks[t];
        let n = task.prog.polls[set].pipes.len() as u64;
        let c = &self.machine.costs;
        let entry = if task.op_phase == 0 { c.syscall } else { Ns(0) };
        steps.push(Step::Delay(KernelPath::Pipe, entry + Ns(c.poll_fd.0.saturating_mul(n))));
        steps.push(Step::Do(Action::Poll { task: t }));
    }

    /// `do_poll`: a readable pipe sends the task to its arm; with none readable the task
    /// waits on every pipe's wait queue (`poll_schedule_timeout`). The scan starts after
    /// the pipe served last and wraps around, as a program that handles every ready fd of
    /// one `poll` return before polling again serves them (a scan always from the first
    /// would starve the last ones under load).
    pub(crate) fn do_poll(&mut self, cpu: CpuId, t: TaskId) {
        let task = &self.tasks[t];
        let Some(&Op::Poll { set }) = task.prog.ops.get(task.pc) else { return };
        let ps = &task.prog.polls[set];
        let n = ps.pipes.len();
        let from = task.extra.as_ref().and_then(|x| x.poll_next.get(set)).map_or(0, |&i| i as usize);
        let ready = (0..n).map(|k| (from + k) % n).find(|&i| !self.objs.pipes[ps.pipes[i]].is_empty());
        if let Some(i) = ready {
            let arm = ps.arms[i];
            let sets = task.prog.polls.len();
            let task = &mut self.tasks[t];
            let next = &mut task.extra_mut().poll_next;
            if next.len() < sets {
                next.resize(sets, 0);
            }
            next[set] = ((i + 1) % n) as u32;
            task.pc = arm;
            task.op_phase = 0;
            task.op_left = None;
            task.op_aux = 0;
            return;
        }
        for &p in &ps.pipes {
            self.objs.pipes[p].pollers.push(t);
        }
        self.tasks[t].op_phase = 1;
        self.block(cpu, t, BlockedOn::Poll);
    }

    /// A write made a pipe readable: wake its pollers (`pollwake`, with the writer's
    /// `WF_SYNC`), taking each off the other pipes it polls (`poll_freewait`).
    pub(crate) fn wake_pollers(&mut self, cpu: CpuId, pollers: Vec<TaskId>) {
        for t in pollers {
            let task = &self.tasks[t];
            if let Some(&Op::Poll { set }) = task.prog.ops.get(task.pc) {
                for &p in &task.prog.polls[set].pipes {
                    self.objs.pipes[p].pollers.retain(|&w| w != t);
                }
            }
            self.wake_steps(cpu, t, wf::SYNC);
        }
    }

    /// `mark_begin` / `mark_end` (a `clock_gettime` through the vDSO: no kernel entry, and
    /// its few tens of ns are not charged). An end reports the span to the probe.
    pub(crate) fn mark(&mut self, t: TaskId, span: usize, id: u64, begin: bool) {
        let now = self.now;
        let spans = &mut self.tasks[t].extra_mut().spans;
        let open = spans.iter().position(|&(s, i, _)| s == span && i == id);
        let problem = match (begin, open) {
            (true, Some(_)) => Some("mark_begin of a span already open".to_string()),
            (true, None) if spans.len() >= MAX_OPEN_SPANS => {
                Some(format!("more than {MAX_OPEN_SPANS} spans open in one task"))
            }
            (true, None) => {
                spans.push((span, id, now));
                None
            }
            (false, Some(k)) => {
                let (_, _, start) = spans.swap_remove(k);
                self.probe.event(&ProbeEvent::Span { time: now, task: t, span, start });
                None
            }
            (false, None) => Some("mark_end without a matching mark_begin".to_string()),
        };
        if let Some(p) = problem {
            let task = &self.tasks[t];
            let at = task.prog.origin.get(task.pc).map(|o| format!("line {}, `{}`", o.0, o.1)).unwrap_or_default();
            self.fatal.get_or_insert(crate::RunError::Config(format!(
                "task {} at {now}: {p}: span `{}` id {id} ({at})",
                self.info[t].name, self.wl.spans[span]
            )));
        }
    }
}
