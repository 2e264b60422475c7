use schedlab_sim::Ns;

/// Largest cost a machine file may give one kernel path: one second, orders of magnitude
/// above any real path, and small enough that sums of costs stay far from overflow.
pub const MAX_COST: Ns = Ns::from_secs(1);

/// Where a kernel path takes a lock; contention is reported per (lock, site).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LockSite {
    /// `__schedule` (held across `context_switch`, released in `finish_task_switch`).
    Schedule,
    /// `try_to_wake_up` → `ttwu_do_activate` on the target rq, or `ttwu_runnable`.
    TryToWakeUp,
    /// `sched_ttwu_pending`: the target drains its wake list under its own lock.
    TtwuPending,
    /// `wake_up_new_task`.
    WakeUpNewTask,
    /// `scheduler_tick`.
    SchedulerTick,
    /// `move_queued_task` / load-balance detach+attach (`double_rq_lock`).
    Migrate,
    /// `sched_yield` / nice / affinity changes (`task_rq_lock`).
    Setattr,
    /// A futex hash bucket's spinlock (`futex_q_lock` / `futex_wake`).
    FutexBucket,
    /// `sched_fork` → `task_fork_fair` on the parent's runqueue.
    SchedFork,
    /// `load_balance` / `load_balance_newidle`: the balancer's `double_rq_lock` (or
    /// `double_lock_balance`) around moving tasks.
    LoadBalance,
}

impl LockSite {
    pub fn name(self) -> &'static str {
        match self {
            LockSite::Schedule => "schedule",
            LockSite::TryToWakeUp => "try_to_wake_up",
            LockSite::TtwuPending => "sched_ttwu_pending",
            LockSite::WakeUpNewTask => "wake_up_new_task",
            LockSite::SchedulerTick => "scheduler_tick",
            LockSite::Migrate => "move_queued_task",
            LockSite::Setattr => "task_rq_lock",
            LockSite::FutexBucket => "futex_hash_bucket",
            LockSite::SchedFork => "sched_fork",
            LockSite::LoadBalance => "load_balance",
        }
    }
}

/// The kernel path a CPU's kernel time is spent in, for the per-path breakdown of kernel
/// time (`kernel_ns` by path in the outputs; the paths sum to it exactly).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KernelPath {
    /// `__schedule`: deactivate, `pick_next_task` (per entity compared), the context switch.
    Schedule,
    /// `try_to_wake_up`: the waker's cache misses, `ttwu_do_activate`, draining the wake list.
    Wakeup,
    /// `select_task_rq` at wakeup and fork: the policy's search of CPUs and groups.
    Placement,
    /// Load balancing: the policy's scans of groups, CPUs and tasks (newidle, periodic, nohz).
    Balance,
    /// Moving tasks between runqueues (`move_queued_task`, `detach_tasks`/`attach_tasks`, the
    /// stopper's moves) for the balancer or an affinity change.
    Migrate,
    /// `scheduler_tick` → `task_tick`.
    Tick,
    /// Sleeping: `nanosleep` entry, arming the hrtimer, the hrtimer interrupt's expiry.
    Timer,
    /// Pipe `read`/`write` (entry, copy, the pipe's bookkeeping).
    Pipe,
    /// `futex_wait`/`futex_wake` (entry, hashing, the bucket lock).
    Futex,
    /// `clone` (`copy_process`, `sched_fork`, `wake_up_new_task`), `exit`, `wait`.
    ForkExit,
    /// `sched_yield`, `setpriority`, `sched_setaffinity`, `sched_setattr`.
    SchedSyscall,
    /// Interrupt entry on an idle CPU: leaving the idle state.
    IdleExit,
}

impl KernelPath {
    /// Every path, in report order.
    pub const ALL: [KernelPath; 12] = [
        KernelPath::Schedule,
        KernelPath::Wakeup,
        KernelPath::Placement,
        KernelPath::Balance,
        KernelPath::Migrate,
        KernelPath::Tick,
        KernelPath::Timer,
        KernelPath::Pipe,
        KernelPath::Futex,
        KernelPath::ForkExit,
        KernelPath::SchedSyscall,
        KernelPath::IdleExit,
    ];

    pub fn name(self) -> &'static str {
        match self {
            KernelPath::Schedule => "schedule",
            KernelPath::Wakeup => "wakeup",
            KernelPath::Placement => "placement",
            KernelPath::Balance => "balance",
            KernelPath::Migrate => "migrate",
            KernelPath::Tick => "tick",
            KernelPath::Timer => "timer",
            KernelPath::Pipe => "pipe",
            KernelPath::Futex => "futex",
            KernelPath::ForkExit => "fork_exit",
            KernelPath::SchedSyscall => "sched_syscall",
            KernelPath::IdleExit => "idle_exit",
        }
    }

    /// Index into [`KernelPath::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The path of a lock-taking step, by where it takes the lock.
    pub fn of_site(site: LockSite) -> KernelPath {
        match site {
            LockSite::Schedule => KernelPath::Schedule,
            LockSite::TryToWakeUp | LockSite::TtwuPending => KernelPath::Wakeup,
            LockSite::WakeUpNewTask | LockSite::SchedFork => KernelPath::ForkExit,
            LockSite::SchedulerTick => KernelPath::Tick,
            LockSite::Migrate | LockSite::LoadBalance => KernelPath::Migrate,
            LockSite::Setattr => KernelPath::SchedSyscall,
            LockSite::FutexBucket => KernelPath::Futex,
        }
    }
}

/// The work a policy hook reports having done (`schedlab_sched_api::Work` counts it; the
/// cost model charges it per unit, see [`Costs::work_ns`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkUnits {
    /// Entities (tasks or group entities) compared while picking or queueing.
    pub compared: u64,
    /// CPUs whose runqueue the hook read (idle checks, load reads) in placement or balancing.
    pub cpus: u64,
    /// Scheduling groups or domains whose statistics the hook gathered.
    pub groups: u64,
    /// Tasks the balancer examined for migration (`can_migrate_task`, ULE `tdq_steal`).
    pub tasks: u64,
}

impl WorkUnits {
    pub fn is_zero(&self) -> bool {
        *self == WorkUnits::default()
    }
}

/// The cost model: how long each kernel path runs on the CPU that executes it, and how long
/// it holds the lock it takes, plus the timer slack that delays sleepers' wakeups.
///
/// Linux keeps no such table: the scheduler accounts time, not the cost of its own paths.
/// These costs are what makes overhead and contention visible. Defaults are
/// order-of-magnitude figures for a ~3.4 GHz x86 desktop of the i7-3770 generation running on
/// bare metal; each field documents where its number comes from. `schedlab calibrate`
/// measures every one of them on the host (see `docs/machine.md`).
#[derive(Clone, Debug, PartialEq)]
pub struct Costs {
    /// Syscall entry + exit with no work (`getppid`-class syscall ≈ 50–100 ns with mitigations off;
    /// lmbench `lat_syscall null`).
    pub syscall: Ns,
    /// `context_switch`: `switch_mm` + `switch_to` + first-touch misses. lmbench `lat_ctx -s 0 2`
    /// reports ≈ 1–2 µs on Ivy Bridge; half of a `perf bench sched pipe` round trip minus the wakeup.
    pub context_switch: Ns,
    /// `__schedule` bookkeeping under the rq lock (deactivate, pick, put_prev/set_next).
    pub schedule: Ns,
    /// `try_to_wake_up` work before any rq lock on a wakee that last ran on this CPU.
    pub ttwu_local: Ns,
    /// The same for a wakee that last ran elsewhere: a 2005 industry talk on Linux 2.6
    /// bottlenecks names the `task → thread_info → cpu` cache misses as the dominant remote cost.
    pub ttwu_remote: Ns,
    /// `ttwu_do_activate` under the target rq lock (enqueue + preemption check).
    pub ttwu_activate: Ns,
    /// `wake_up_new_task` under the destination rq lock.
    pub wake_up_new_task: Ns,
    /// `copy_process` for a new thread (pthread_create ≈ 10–20 µs on that generation).
    pub fork: Ns,
    /// `do_exit` up to the final `schedule()`.
    pub exit: Ns,
    /// Inter-processor interrupt delivery latency (x86 APIC, ≈ 0.5–2 µs).
    pub ipi_latency: Ns,
    /// Leaving a shallow idle state (C1 exit latency on Intel client parts: 1–2 µs).
    pub idle_exit: Ns,
    /// `scheduler_tick` under the rq lock.
    pub tick: Ns,
    /// One expired sleeper in the hrtimer interrupt (`kernel/time/hrtimer.c: hrtimer_interrupt`
    /// → `__run_hrtimer` → `hrtimer_wakeup`): interrupt entry/exit, the callback and the
    /// clock-event reprogramming for the next timer.
    pub timer_irq: Ns,
    /// Arming a sleeper's hrtimer in the sleeping task's context (`kernel/time/hrtimer.c:
    /// hrtimer_start_range_ns`, including `tick_program_event` when it becomes the CPU's first
    /// timer). A TSC-deadline MSR write on bare metal (≈ 100–300 ns); a trap to the hypervisor
    /// in a VM, which is why sleeping costs a guest tens of µs of CPU time.
    pub hrtimer_start: Ns,
    /// `current->timer_slack_ns`: 50 µs for every task (`init/init_task.c` sets it, `fork`
    /// inherits it, `prctl(PR_SET_TIMERSLACK)` changes it; real-time tasks get none).
    /// `kernel/time/hrtimer.c: hrtimer_nanosleep` (v6.12) arms the sleeper's hrtimer for the range
    /// [expiry, expiry + slack]: it fires at the hard end unless an hrtimer interrupt (the tick
    /// of a busy CPU, another sleeper's timer) runs on that CPU after the soft expiry.
    pub timer_slack: Ns,
    /// `futex_wait`/`futex_wake` work outside the bucket lock (hashing, `get_futex_key`).
    pub futex: Ns,
    /// Bucket-lock hold for queueing or collecting waiters.
    pub futex_bucket_hold: Ns,
    /// Fixed cost of one pipe `read`/`write` (pipe mutex, wakeup bookkeeping).
    pub pipe_op: Ns,
    /// Copy cost per byte in picoseconds (≈ 10 GB/s `copy_user` → 100 ps/B).
    pub pipe_byte_ps: u64,
    /// Fixed cost of one `AF_UNIX` stream `sendmsg`/`recvmsg` (a workload's `kind = "socket"`
    /// pipe), in place of `pipe_op`: `net/unix/af_unix.c: unix_stream_sendmsg` allocates an
    /// `sk_buff` per message and takes the peer's `unix_state_lock`, the reader frees it;
    /// lmbench's AF_UNIX latency runs about 2–2.5 × its pipe latency on the same machine.
    pub socket_op: Ns,
    /// `do_poll` work per watched fd (`fdget`, the file's `->poll` with `__pollwait`
    /// queueing a `poll_table_entry` on the pipe's wait queue; `fs/select.c`).
    pub poll_fd: Ns,
    /// `move_queued_task` / `double_rq_lock` critical section.
    pub migrate: Ns,
    /// Extra CPU work a task needs after moving to another core in the same LLC (L1/L2 refill).
    pub rewarm_same_llc: Ns,
    /// Extra CPU work after moving to another LLC (L3 refill, ~tens of µs for a warm working set).
    pub rewarm_cross_llc: Ns,
    /// Cross-node rewarm is `rewarm_cross_llc × distance / 10` (SLIT distance, 10 = local).
    pub numa_scaled: bool,
    /// Per-thread throughput, in permille of a whole core, of an SMT thread while a sibling
    /// thread of its core is busy (user, kernel or spinning); 1000 = SMT shares nothing. Intel
    /// gives two threads of one Nehalem-derived core (the i7-3770's Ivy Bridge among them)
    /// roughly 20–30 % more throughput than one ("Performance Insights to Intel
    /// Hyper-Threading Technology", Intel, 2009; H. Wong, "Hyper-Threading Performance",
    /// 2011, measured multi-process workloads on a Core i7 in that range): 1.25 / 2 per thread,
    /// 625 ‰. With `n` > 2 busy threads per core each runs at `smt_factor × 2 / n`.
    pub smt_factor: u32,
    /// Moving a cache line written by another core of the same LLC (a lock word and the
    /// runqueue fields that follow it). T. David, R. Guerraoui, V. Trigonakis, "Everything
    /// You Always Wanted to Know About Synchronization but Were Afraid to Ask" (SOSP 2013)
    /// measured ≈ 80–110 cycles for a modified line on the same die (Opteron, Xeon), ≈ 40–50 ns.
    /// SMT siblings share L1 and L2: no transfer.
    pub line_same_llc: Ns,
    /// The same from another LLC of the same NUMA node (the other die of a multi-chip package:
    /// ≈ 160 cycles on the Opteron 6172 in the same study).
    pub line_cross_llc: Ns,
    /// The same from another NUMA node (one or two HyperTransport hops: ≈ 170–250 cycles on
    /// the Opteron, ≈ 290–400 on a 4-socket Xeon in the same study).
    pub line_cross_node: Ns,
    /// Cache lines of the wakee (`p->pi_lock`, `p->state`, `p->on_rq`, `task_thread_info(p)->cpu`,
    /// its scheduling entity) that `try_to_wake_up` reads after the wakee's last CPU wrote
    /// them: the 2005 Linux 2.6 bottlenecks talk names this chain as the remote wakeup's
    /// dominant cost. `ttwu_remote` is the cost within one LLC; a wakee last run in another LLC
    /// or node costs `ttwu_lines` × the extra line-transfer time on top.
    pub ttwu_lines: u32,
    /// Per entity a policy compares while picking or queueing (a tree node visited, a queue
    /// slot scanned): a few dependent loads, mostly cached.
    pub work_compare: Ns,
    /// Per CPU whose runqueue a placement or balancing search reads (`idle_cpu`, load):
    /// usually a line last written by that CPU, hence about one `line_same_llc`.
    pub work_cpu: Ns,
    /// Per scheduling group or domain whose statistics are gathered (`update_sg_lb_stats`,
    /// a ULE `cpu_search` group): the loop and the arithmetic beyond its CPUs' reads.
    pub work_group: Ns,
    /// Per task the balancer examines for migration (`can_migrate_task`, ULE `tdq_steal`).
    pub work_task: Ns,
    /// Linux 2.6.32 `try_to_wake_up`'s first hold, on the wakee's old runqueue
    /// (`task_rq_lock`, `update_rq_clock`, the state check, `TASK_WAKING`) before it selects a
    /// CPU and locks the target (`kernel/sched.c:try_to_wake_up (v2.6.32)`): about a third of
    /// the activation under the target lock.
    pub ttwu_old_rq: Ns,
    /// One `spin_trylock` of a runqueue lock (the delayed new-task wakeup's attempt): an
    /// atomic exchange on the lock word, which is usually in another core's cache (one
    /// `line_same_llc`-class transfer, ≈ 40 ns on the i7-3770, plus the locked instruction).
    pub rq_trylock: Ns,
    /// One delay-queue operation of the delayed new-task wakeup (the paper's `dtqueue`): a
    /// ring slot write and index store by the producer, or one entry's read by the consumer;
    /// the bitmap's `dtlock`, held for one bit operation, is included. A few cached stores.
    pub delay_queue_op: Ns,
    /// Putting an entry on a full ring's overflow list instead: a node allocation
    /// (`kmalloc` from a per-CPU slab, ≈ 100 ns) and the tail link.
    pub delay_overflow: Ns,
}

impl Default for Costs {
    fn default() -> Self {
        Costs {
            syscall: Ns(100),
            context_switch: Ns(1_200),
            schedule: Ns(300),
            ttwu_local: Ns(250),
            ttwu_remote: Ns(600),
            ttwu_activate: Ns(250),
            wake_up_new_task: Ns(500),
            fork: Ns(15_000),
            exit: Ns(5_000),
            ipi_latency: Ns(1_000),
            idle_exit: Ns(1_000),
            tick: Ns(300),
            timer_irq: Ns(200),
            hrtimer_start: Ns(250),
            timer_slack: Ns(50_000),
            futex: Ns(150),
            futex_bucket_hold: Ns(80),
            pipe_op: Ns(400),
            pipe_byte_ps: 100,
            socket_op: Ns(1_000),
            poll_fd: Ns(60),
            migrate: Ns(1_000),
            rewarm_same_llc: Ns(2_000),
            rewarm_cross_llc: Ns(20_000),
            numa_scaled: true,
            smt_factor: 625,
            line_same_llc: Ns(40),
            line_cross_llc: Ns(80),
            line_cross_node: Ns(120),
            ttwu_lines: 5,
            work_compare: Ns(5),
            work_cpu: Ns(40),
            work_group: Ns(30),
            work_task: Ns(20),
            ttwu_old_rq: Ns(100),
            rq_trylock: Ns(50),
            delay_queue_op: Ns(30),
            delay_overflow: Ns(150),
        }
    }
}

impl Costs {
    /// A model where every kernel path is free and timers fire at their exact expiry: the
    /// pure-policy view, useful when checking a policy's arithmetic against the kernel's
    /// formulas.
    pub fn zero() -> Costs {
        Costs {
            syscall: Ns(0),
            context_switch: Ns(0),
            schedule: Ns(0),
            ttwu_local: Ns(0),
            ttwu_remote: Ns(0),
            ttwu_activate: Ns(0),
            wake_up_new_task: Ns(0),
            fork: Ns(0),
            exit: Ns(0),
            ipi_latency: Ns(0),
            idle_exit: Ns(0),
            tick: Ns(0),
            timer_irq: Ns(0),
            hrtimer_start: Ns(0),
            timer_slack: Ns(0),
            futex: Ns(0),
            futex_bucket_hold: Ns(0),
            pipe_op: Ns(0),
            pipe_byte_ps: 0,
            socket_op: Ns(0),
            poll_fd: Ns(0),
            migrate: Ns(0),
            rewarm_same_llc: Ns(0),
            rewarm_cross_llc: Ns(0),
            numa_scaled: false,
            smt_factor: 1000,
            line_same_llc: Ns(0),
            line_cross_llc: Ns(0),
            line_cross_node: Ns(0),
            ttwu_lines: 0,
            work_compare: Ns(0),
            work_cpu: Ns(0),
            work_group: Ns(0),
            work_task: Ns(0),
            ttwu_old_rq: Ns(0),
            rq_trylock: Ns(0),
            delay_queue_op: Ns(0),
            delay_overflow: Ns(0),
        }
    }

    /// What `work` costs: each unit at its per-unit cost.
    pub fn work_ns(&self, w: &WorkUnits) -> Ns {
        Ns(w.compared * self.work_compare.0
            + w.cpus * self.work_cpu.0
            + w.groups * self.work_group.0
            + w.tasks * self.work_task.0)
    }

    /// Names and values, for `schedlab list` and the report.
    pub fn fields(&self) -> Vec<(&'static str, String)> {
        let d = |n: Ns| n.to_string();
        vec![
            ("syscall", d(self.syscall)),
            ("context_switch", d(self.context_switch)),
            ("schedule", d(self.schedule)),
            ("ttwu_local", d(self.ttwu_local)),
            ("ttwu_remote", d(self.ttwu_remote)),
            ("ttwu_activate", d(self.ttwu_activate)),
            ("wake_up_new_task", d(self.wake_up_new_task)),
            ("fork", d(self.fork)),
            ("exit", d(self.exit)),
            ("ipi_latency", d(self.ipi_latency)),
            ("idle_exit", d(self.idle_exit)),
            ("tick", d(self.tick)),
            ("timer_irq", d(self.timer_irq)),
            ("hrtimer_start", d(self.hrtimer_start)),
            ("timer_slack", d(self.timer_slack)),
            ("futex", d(self.futex)),
            ("futex_bucket_hold", d(self.futex_bucket_hold)),
            ("pipe_op", d(self.pipe_op)),
            ("pipe_byte_ps", self.pipe_byte_ps.to_string()),
            ("socket_op", d(self.socket_op)),
            ("poll_fd", d(self.poll_fd)),
            ("migrate", d(self.migrate)),
            ("rewarm_same_llc", d(self.rewarm_same_llc)),
            ("rewarm_cross_llc", d(self.rewarm_cross_llc)),
            ("numa_scaled", self.numa_scaled.to_string()),
            ("smt_factor", self.smt_factor.to_string()),
            ("line_same_llc", d(self.line_same_llc)),
            ("line_cross_llc", d(self.line_cross_llc)),
            ("line_cross_node", d(self.line_cross_node)),
            ("ttwu_lines", self.ttwu_lines.to_string()),
            ("work_compare", d(self.work_compare)),
            ("work_cpu", d(self.work_cpu)),
            ("work_group", d(self.work_group)),
            ("work_task", d(self.work_task)),
            ("ttwu_old_rq", d(self.ttwu_old_rq)),
            ("rq_trylock", d(self.rq_trylock)),
            ("delay_queue_op", d(self.delay_queue_op)),
            ("delay_overflow", d(self.delay_overflow)),
        ]
    }

    /// Sets one field by name from its text form (used by machine files); each cost is at
    /// most [`MAX_COST`] (`pipe_byte_ps`: that much per byte).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let dur = || schedlab_sim::parse_duration(value);
        let slot = match key {
            "syscall" => &mut self.syscall,
            "context_switch" => &mut self.context_switch,
            "schedule" => &mut self.schedule,
            "ttwu_local" => &mut self.ttwu_local,
            "ttwu_remote" => &mut self.ttwu_remote,
            "ttwu_activate" => &mut self.ttwu_activate,
            "wake_up_new_task" => &mut self.wake_up_new_task,
            "fork" => &mut self.fork,
            "exit" => &mut self.exit,
            "ipi_latency" => &mut self.ipi_latency,
            "idle_exit" => &mut self.idle_exit,
            "tick" => &mut self.tick,
            "timer_irq" => &mut self.timer_irq,
            "hrtimer_start" => &mut self.hrtimer_start,
            "timer_slack" => &mut self.timer_slack,
            "futex" => &mut self.futex,
            "futex_bucket_hold" => &mut self.futex_bucket_hold,
            "pipe_op" => &mut self.pipe_op,
            "socket_op" => &mut self.socket_op,
            "poll_fd" => &mut self.poll_fd,
            "migrate" => &mut self.migrate,
            "rewarm_same_llc" => &mut self.rewarm_same_llc,
            "rewarm_cross_llc" => &mut self.rewarm_cross_llc,
            "line_same_llc" => &mut self.line_same_llc,
            "line_cross_llc" => &mut self.line_cross_llc,
            "line_cross_node" => &mut self.line_cross_node,
            "work_compare" => &mut self.work_compare,
            "work_cpu" => &mut self.work_cpu,
            "work_group" => &mut self.work_group,
            "work_task" => &mut self.work_task,
            "ttwu_old_rq" => &mut self.ttwu_old_rq,
            "rq_trylock" => &mut self.rq_trylock,
            "delay_queue_op" => &mut self.delay_queue_op,
            "delay_overflow" => &mut self.delay_overflow,
            "smt_factor" => {
                let v: u32 = value.parse().map_err(|_| format!("`{value}` is not an integer (permille)"))?;
                if !(1..=1000).contains(&v) {
                    return Err(format!("smt_factor {v} out of range 1..=1000 (permille of a whole core)"));
                }
                self.smt_factor = v;
                return Ok(());
            }
            "ttwu_lines" => {
                self.ttwu_lines = value.parse().map_err(|_| format!("`{value}` is not an integer"))?;
                return Ok(());
            }
            "pipe_byte_ps" => {
                let ps: u64 = value.parse().map_err(|_| format!("`{value}` is not an integer"))?;
                if ps > MAX_COST.0 * 1000 {
                    return Err(format!("{ps} ps per byte exceeds the limit of {MAX_COST} per byte"));
                }
                self.pipe_byte_ps = ps;
                return Ok(());
            }
            "numa_scaled" => {
                self.numa_scaled = value.parse().map_err(|_| format!("`{value}` is not true/false"))?;
                return Ok(());
            }
            _ => {
                let names: Vec<&str> = self.fields().iter().map(|f| f.0).collect();
                return Err(format!("unknown cost `{key}`; expected one of {}", names.join(", ")));
            }
        };
        let d = dur()?;
        if d > MAX_COST {
            return Err(format!("{d} exceeds the limit of {MAX_COST} for one kernel path's cost"));
        }
        *slot = d;
        Ok(())
    }
}
