//! The constant costs of kernel paths (`[costs]`): one table defines each cost's name,
//! default and documentation; the lock sites and kernel paths time is booked against.

use crate::spec::{Field, Kind, Table, Val};
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

/// Every cost's kind, except the few that are not durations.
const DURATION: Kind = Kind::Duration { max: MAX_COST };

/// A scalar field's value as a table number.
trait Scalar {
    fn to_u64(&self) -> u64;
    fn from_u64(v: u64) -> Self;
}
impl Scalar for Ns {
    fn to_u64(&self) -> u64 {
        self.0
    }
    fn from_u64(v: u64) -> Self {
        Ns(v)
    }
}
impl Scalar for u64 {
    fn to_u64(&self) -> u64 {
        *self
    }
    fn from_u64(v: u64) -> Self {
        v
    }
}
impl Scalar for u32 {
    fn to_u64(&self) -> u64 {
        u64::from(*self)
    }
    fn from_u64(v: u64) -> Self {
        u32::try_from(v).unwrap_or(u32::MAX)
    }
}
impl Scalar for bool {
    fn to_u64(&self) -> u64 {
        u64::from(*self)
    }
    fn from_u64(v: u64) -> Self {
        v != 0
    }
}

/// Defines [`Costs`] — each field once, with its documentation, its default, its value in
/// [`Costs::zero`] and its [`Kind`] — and [`COSTS`], the table the machine file, `--set`,
/// the record and calibrate read.
macro_rules! costs {
    ($( $(#[doc = $doc:literal])* $name:ident : $ty:ty = $default:expr, zero $zero:expr, $kind:expr; )*) => {
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
            $( $(#[doc = $doc])* pub $name: $ty, )*
        }

        impl Default for Costs {
            fn default() -> Self {
                Costs { $( $name: $default, )* }
            }
        }

        impl Costs {
            /// A model where every kernel path is free and timers fire at their exact expiry:
            /// the pure-policy view, useful when checking a policy's arithmetic against the
            /// kernel's formulas.
            pub fn zero() -> Costs {
                Costs { $( $name: $zero, )* }
            }
        }

        /// The costs' table: names, kinds and documentation, in declaration order.
        pub static COSTS: Table<Costs> = Table {
            section: "costs",
            what: "cost",
            fields: &[ $( Field {
                name: stringify!($name),
                kind: $kind,
                optional: false,
                doc: concat!($($doc,)* ""),
                get: |c: &Costs| Val::Num(Scalar::to_u64(&c.$name)),
                set: |c: &mut Costs, v: Val| c.$name = Scalar::from_u64(v.num()),
            }, )* ],
        };
    };
}

costs! {
    /// Syscall entry + exit with no work (`getppid`-class syscall ≈ 50–100 ns with mitigations off;
    /// lmbench `lat_syscall null`).
    syscall: Ns = Ns(100), zero Ns(0), DURATION;
    /// `context_switch`: `switch_mm` + `switch_to` + first-touch misses. lmbench `lat_ctx -s 0 2`
    /// reports ≈ 1–2 µs on Ivy Bridge; half of a `perf bench sched pipe` round trip minus the wakeup.
    context_switch: Ns = Ns(1_200), zero Ns(0), DURATION;
    /// `__schedule` bookkeeping under the rq lock (deactivate, pick, put_prev/set_next).
    schedule: Ns = Ns(300), zero Ns(0), DURATION;
    /// `try_to_wake_up` work before any rq lock on a wakee that last ran on this CPU.
    ttwu_local: Ns = Ns(250), zero Ns(0), DURATION;
    /// The same for a wakee that last ran elsewhere: a 2005 industry talk on Linux 2.6
    /// bottlenecks names the `task → thread_info → cpu` cache misses as the dominant remote cost.
    ttwu_remote: Ns = Ns(600), zero Ns(0), DURATION;
    /// `ttwu_do_activate` under the target rq lock (enqueue + preemption check).
    ttwu_activate: Ns = Ns(250), zero Ns(0), DURATION;
    /// `wake_up_new_task` under the destination rq lock.
    wake_up_new_task: Ns = Ns(500), zero Ns(0), DURATION;
    /// `copy_process` for a new thread (pthread_create ≈ 10–20 µs on that generation).
    fork: Ns = Ns(15_000), zero Ns(0), DURATION;
    /// `do_exit` up to the final `schedule()`.
    exit: Ns = Ns(5_000), zero Ns(0), DURATION;
    /// Inter-processor interrupt delivery latency (x86 APIC, ≈ 0.5–2 µs).
    ipi_latency: Ns = Ns(1_000), zero Ns(0), DURATION;
    /// Leaving a shallow idle state (C1 exit latency on Intel client parts: 1–2 µs).
    idle_exit: Ns = Ns(1_000), zero Ns(0), DURATION;
    /// `scheduler_tick` under the rq lock.
    tick: Ns = Ns(300), zero Ns(0), DURATION;
    /// One expired sleeper in the hrtimer interrupt (`kernel/time/hrtimer.c: hrtimer_interrupt`
    /// → `__run_hrtimer` → `hrtimer_wakeup`): interrupt entry/exit, the callback and the
    /// clock-event reprogramming for the next timer.
    timer_irq: Ns = Ns(200), zero Ns(0), DURATION;
    /// Arming a sleeper's hrtimer in the sleeping task's context (`kernel/time/hrtimer.c:
    /// hrtimer_start_range_ns`, including `tick_program_event` when it becomes the CPU's first
    /// timer). A TSC-deadline MSR write on bare metal (≈ 100–300 ns); a trap to the hypervisor
    /// in a VM, which is why sleeping costs a guest tens of µs of CPU time.
    hrtimer_start: Ns = Ns(250), zero Ns(0), DURATION;
    /// `current->timer_slack_ns`: 50 µs for every task (`init/init_task.c` sets it, `fork`
    /// inherits it, `prctl(PR_SET_TIMERSLACK)` changes it; real-time tasks get none).
    /// `kernel/time/hrtimer.c: hrtimer_nanosleep` (v6.12) arms the sleeper's hrtimer for the range
    /// [expiry, expiry + slack]: it fires at the hard end unless an hrtimer interrupt (the tick
    /// of a busy CPU, another sleeper's timer) runs on that CPU after the soft expiry.
    timer_slack: Ns = Ns(50_000), zero Ns(0), DURATION;
    /// `futex_wait`/`futex_wake` work outside the bucket lock (hashing, `get_futex_key`).
    futex: Ns = Ns(150), zero Ns(0), DURATION;
    /// Bucket-lock hold for queueing or collecting waiters.
    futex_bucket_hold: Ns = Ns(80), zero Ns(0), DURATION;
    /// Fixed cost of one pipe `read`/`write` (pipe mutex, wakeup bookkeeping).
    pipe_op: Ns = Ns(400), zero Ns(0), DURATION;
    /// Copy cost per byte in picoseconds (≈ 10 GB/s `copy_user` → 100 ps/B).
    pipe_byte_ps: u64 = 100, zero 0, Kind::Int { min: 0, max: MAX_COST.0 * 1000, unit: "ps per byte" };
    /// Fixed cost of one `AF_UNIX` stream `sendmsg`/`recvmsg` (a workload's `kind = "socket"`
    /// pipe), in place of `pipe_op`: `net/unix/af_unix.c: unix_stream_sendmsg` allocates an
    /// `sk_buff` per message and takes the peer's `unix_state_lock`, the reader frees it;
    /// lmbench's AF_UNIX latency runs about 2–2.5 × its pipe latency on the same machine.
    socket_op: Ns = Ns(1_000), zero Ns(0), DURATION;
    /// `do_poll` work per watched fd (`fdget`, the file's `->poll` with `__pollwait`
    /// queueing a `poll_table_entry` on the pipe's wait queue; `fs/select.c`).
    poll_fd: Ns = Ns(60), zero Ns(0), DURATION;
    /// `move_queued_task` / `double_rq_lock` critical section.
    migrate: Ns = Ns(1_000), zero Ns(0), DURATION;
    /// Extra CPU work a task needs after moving to another core in the same LLC (L1/L2 refill).
    rewarm_same_llc: Ns = Ns(2_000), zero Ns(0), DURATION;
    /// Extra CPU work after moving to another LLC (L3 refill, ~tens of µs for a warm working set).
    rewarm_cross_llc: Ns = Ns(20_000), zero Ns(0), DURATION;
    /// Cross-node rewarm is `rewarm_cross_llc × distance / 10` (SLIT distance, 10 = local).
    numa_scaled: bool = true, zero false, Kind::Bool;
    /// Per-thread throughput, in permille of a whole core, of an SMT thread while a sibling
    /// thread of its core is busy (user, kernel or spinning); 1000 = SMT shares nothing. Intel
    /// gives two threads of one Nehalem-derived core (the i7-3770's Ivy Bridge among them)
    /// roughly 20–30 % more throughput than one ("Performance Insights to Intel
    /// Hyper-Threading Technology", Intel, 2009; H. Wong, "Hyper-Threading Performance",
    /// 2011, measured multi-process workloads on a Core i7 in that range): 1.25 / 2 per thread,
    /// 625 ‰. With `n` > 2 busy threads per core each runs at `smt_factor × 2 / n`.
    smt_factor: u32 = 625, zero 1000, Kind::Int { min: 1, max: 1000, unit: "permille" };
    /// Moving a cache line written by another core of the same LLC (a lock word and the
    /// runqueue fields that follow it). T. David, R. Guerraoui, V. Trigonakis, "Everything
    /// You Always Wanted to Know About Synchronization but Were Afraid to Ask" (SOSP 2013)
    /// measured ≈ 80–110 cycles for a modified line on the same die (Opteron, Xeon), ≈ 40–50 ns.
    /// SMT siblings share L1 and L2: no transfer.
    line_same_llc: Ns = Ns(40), zero Ns(0), DURATION;
    /// The same from another LLC of the same NUMA node (the other die of a multi-chip package:
    /// ≈ 160 cycles on the Opteron 6172 in the same study).
    line_cross_llc: Ns = Ns(80), zero Ns(0), DURATION;
    /// The same from another NUMA node (one or two HyperTransport hops: ≈ 170–250 cycles on
    /// the Opteron, ≈ 290–400 on a 4-socket Xeon in the same study).
    line_cross_node: Ns = Ns(120), zero Ns(0), DURATION;
    /// Cache lines of the wakee (`p->pi_lock`, `p->state`, `p->on_rq`, `task_thread_info(p)->cpu`,
    /// its scheduling entity) that `try_to_wake_up` reads after the wakee's last CPU wrote
    /// them: the 2005 Linux 2.6 bottlenecks talk names this chain as the remote wakeup's
    /// dominant cost. `ttwu_remote` is the cost within one LLC; a wakee last run in another LLC
    /// or node costs `ttwu_lines` × the extra line-transfer time on top.
    ttwu_lines: u32 = 5, zero 0, Kind::Int { min: 0, max: u32::MAX as u64, unit: "lines" };
    /// Per entity a policy compares while picking or queueing (a tree node visited, a queue
    /// slot scanned): a few dependent loads, mostly cached.
    work_compare: Ns = Ns(5), zero Ns(0), DURATION;
    /// Per CPU whose runqueue a placement or balancing search reads (`idle_cpu`, load):
    /// usually a line last written by that CPU, hence about one `line_same_llc`.
    work_cpu: Ns = Ns(40), zero Ns(0), DURATION;
    /// Per scheduling group or domain whose statistics are gathered (`update_sg_lb_stats`,
    /// a ULE `cpu_search` group): the loop and the arithmetic beyond its CPUs' reads.
    work_group: Ns = Ns(30), zero Ns(0), DURATION;
    /// Per task the balancer examines for migration (`can_migrate_task`, ULE `tdq_steal`).
    work_task: Ns = Ns(20), zero Ns(0), DURATION;
    /// Linux 2.6.32 `try_to_wake_up`'s first hold, on the wakee's old runqueue
    /// (`task_rq_lock`, `update_rq_clock`, the state check, `TASK_WAKING`) before it selects a
    /// CPU and locks the target (`kernel/sched.c:try_to_wake_up (v2.6.32)`): about a third of
    /// the activation under the target lock.
    ttwu_old_rq: Ns = Ns(100), zero Ns(0), DURATION;
    /// One `spin_trylock` of a runqueue lock (the delayed new-task wakeup's attempt): an
    /// atomic exchange on the lock word, which is usually in another core's cache (one
    /// `line_same_llc`-class transfer, ≈ 40 ns on the i7-3770, plus the locked instruction).
    rq_trylock: Ns = Ns(50), zero Ns(0), DURATION;
    /// One delay-queue operation of the delayed new-task wakeup (the paper's `dtqueue`): a
    /// ring slot write and index store by the producer, or one entry's read by the consumer;
    /// the bitmap's `dtlock`, held for one bit operation, is included. A few cached stores.
    delay_queue_op: Ns = Ns(30), zero Ns(0), DURATION;
    /// Putting an entry on a full ring's overflow list instead: a node allocation
    /// (`kmalloc` from a per-CPU slab, ≈ 100 ns) and the tail link.
    delay_overflow: Ns = Ns(150), zero Ns(0), DURATION;
}

impl Costs {
    /// What `work` costs: each unit at its per-unit cost.
    pub fn work_ns(&self, w: &WorkUnits) -> Ns {
        Ns(w.compared * self.work_compare.0
            + w.cpus * self.work_cpu.0
            + w.groups * self.work_group.0
            + w.tasks * self.work_task.0)
    }

    /// Names and values, for `schedlab list`, the record and calibrate's machine file, in
    /// declaration order; each value reads back exactly ([`Costs::set`]).
    pub fn fields(&self) -> Vec<(&'static str, String)> {
        COSTS.show(self)
    }

    /// Sets one field by name from its text form (machine files, `--set costs.NAME`); each
    /// cost is at most [`MAX_COST`] (`pipe_byte_ps`: that much per byte).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        COSTS.set(self, key, value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table kept today's names, order and default values (the record's `costs` map and
    /// calibrated machine files depend on them).
    #[test]
    fn the_table_keeps_the_names_and_defaults() {
        let names = COSTS.names();
        assert_eq!(names.len(), 38);
        assert_eq!(&names[..3], &["syscall", "context_switch", "schedule"]);
        assert_eq!(names.last(), Some(&"delay_overflow"));
        let f = Costs::default().fields();
        let get = |k: &str| f.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone()).unwrap();
        assert_eq!(get("context_switch"), "1.200us");
        assert_eq!(get("timer_slack"), "50us");
        assert_eq!(get("pipe_byte_ps"), "100");
        assert_eq!(get("numa_scaled"), "true");
        assert_eq!(get("smt_factor"), "625");
        assert_eq!(get("line_same_llc"), "40ns");
        assert!(COSTS.field("syscall").unwrap().doc.contains("lmbench"));
    }

    #[test]
    fn every_cost_round_trips_and_limits_hold() {
        let mut c = Costs::default();
        for (k, _) in Costs::zero().fields() {
            let odd = match COSTS.field(k).unwrap().kind {
                Kind::Bool => "false",
                Kind::Int { .. } => "7",
                _ => "1.234567ms",
            };
            c.set(k, odd).unwrap();
        }
        let mut back = Costs::zero();
        for (k, v) in c.fields() {
            back.set(k, &v).unwrap();
        }
        assert_eq!(back, c);
        assert!(c.set("tick", "2s").unwrap_err().contains("limit of 1s"));
        assert!(c.set("smt_factor", "0").unwrap_err().contains("1..=1000"));
        assert!(c.set("warp", "1us").unwrap_err().contains("unknown cost `warp`"));
        assert!(c.set("fork", "15").unwrap_err().contains("missing unit"));
    }
}
