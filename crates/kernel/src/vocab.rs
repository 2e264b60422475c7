//! The kernel model's vocabulary: the actions a CPU executes (`Action`, `FAction`), the
//! steps they run in (`Step`), the events of the event queue (`Event`, `Ipi`), lock numbers
//! and lock sites, futex keys. A leaf: it names no other module of this crate, so every
//! mechanism file (`cpu.rs`, `core.rs`, `exec.rs`, `futex.rs`, …) can speak it without
//! importing another mechanism file.

use schedlab_machine::{KernelPath, LockSite};
use schedlab_sim::{CpuId, Ns, TaskId};
use schedlab_workload::{WakeCmp, WakeOpKind};

pub(crate) const SITES: [LockSite; 10] = [
    LockSite::Schedule,
    LockSite::TryToWakeUp,
    LockSite::TtwuPending,
    LockSite::WakeUpNewTask,
    LockSite::SchedulerTick,
    LockSite::Migrate,
    LockSite::Setattr,
    LockSite::FutexBucket,
    LockSite::SchedFork,
    LockSite::LoadBalance,
];

pub(crate) fn site_index(s: LockSite) -> usize {
    SITES.iter().position(|x| *x == s).expect("every site listed")
}

/// A lock's number: runqueue locks first (lock `c` is CPU `c`'s), then futex buckets'.
/// `u32` (checked where a lock is created) so that a step holding two is 64 bytes.
pub(crate) type LockId = u32;

/// A kernel action, executed atomically when its step runs (after its locks are taken).
#[derive(Clone, Debug)]
pub(crate) enum Action {
    /// `__schedule`; `newidle`: newly-idle balancing may still run.
    Schedule {
        newidle: bool,
    },
    Tick,
    /// The SCHED_SOFTIRQ of a kicked idle CPU (`nohz_idle_balance`).
    NohzBalance,
    /// An idle CPU woken by its timer looks for work (`balance(IdleWake)`).
    IdleWake,
    /// Move up to `count` of `tasks` (in order) from `from` to `to`.
    MoveQueuedBatch(Box<Batch>),
    TtwuStart {
        task: TaskId,
        wf: u32,
        claimed: bool,
    },
    TtwuRunnable {
        task: TaskId,
        wf: u32,
        cpu: CpuId,
    },
    TtwuActivate {
        task: TaskId,
        wf: u32,
        cpu: CpuId,
    },
    TtwuPending,
    ForkChild {
        parent: TaskId,
        template: usize,
    },
    WakeUpNewTask {
        child: TaskId,
        cpu: CpuId,
    },
    /// `delayed_wakeup`: trylock `cpu`'s runqueue for `child`, else delay it (`delayed.rs`).
    WakeUpNewTaskTry {
        child: TaskId,
        cpu: CpuId,
    },
    /// v5.15 `detach_tasks` under `from`'s lock alone: up to `count` of `tasks` leave it
    /// (in transit), then `AttachBatch` takes `to`'s lock.
    DetachBatch {
        batch: Box<Batch>,
        attach_hold: Ns,
    },
    /// v5.15 `attach_tasks` under `to`'s lock.
    AttachBatch {
        tasks: Vec<TaskId>,
        to: CpuId,
    },
    /// Linux 2.6.32's newly-idle balance, still holding `this` runqueue's lock: take
    /// `busiest` by `double_lock_balance`, then run `action` for `hold` (`version.rs`).
    DoubleLockBalance {
        this: CpuId,
        busiest: CpuId,
        hold: Ns,
        action: Box<Action>,
    },
    MoveQueued {
        task: TaskId,
        from: CpuId,
        to: CpuId,
    },
    ActivateMoved {
        task: TaskId,
        to: CpuId,
    },
    Yield {
        task: TaskId,
    },
    SetNice {
        task: TaskId,
        nice: i32,
    },
    SetAffinity {
        task: TaskId,
        set: schedlab_machine::CpuSet,
    },
    /// `sched_setattr(sched_runtime)` of a fair task.
    SetSlice {
        task: TaskId,
        slice: Option<u64>,
    },
    /// `sched_setattr(policy)` of `task`; `at`: the op's byte offset in the workload, for a
    /// refusal.
    SetPolicy(Box<(TaskId, schedlab_sched_api::TaskPolicy, usize)>),
    /// The policy's timer expired on this CPU (`SchedClass::timer`).
    PolicyTimer,
    SleepUntil {
        task: TaskId,
        until: Ns,
    },
    Exit {
        task: TaskId,
    },
    WaitChildren {
        task: TaskId,
    },
    PipeWrite {
        task: TaskId,
        pipe: usize,
    },
    PipeRead {
        task: TaskId,
        pipe: usize,
    },
    /// `do_poll`'s scan of the task's current `poll` op's pipes.
    Poll {
        task: TaskId,
    },
    FutexWait {
        task: TaskId,
        key: FutexKey,
        expected: u64,
    },
    FutexWake {
        key: FutexKey,
        n: u64,
    },
    /// The operations on `[[futex]]` words (`futex.rs`).
    Futex(Box<FAction>),
}

/// What the interpreter does after an op (`exec.rs`).
pub(crate) enum Flow {
    /// Go on to the next op at once.
    Continue,
    /// Kernel steps were queued.
    Kernel,
    /// User work was started (or the run failed): the CPU is busy.
    User,
}

/// A balancer's batch: up to `count` of `tasks` (in order) move from `from` to `to`.
/// Boxed in its actions, as are the rare large ones (`SetPolicy`, the futex word
/// operations), so that an `Action` is 40 bytes and a `Step` 64: steps are moved in and
/// out of the CPUs' step queues several times an event.
#[derive(Clone, Debug)]
pub(crate) struct Batch {
    pub tasks: Vec<TaskId>,
    pub from: CpuId,
    pub to: CpuId,
    pub count: usize,
}

// The sizes hold on 64-bit hosts; wasm32's 4-byte pointers make both smaller.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Action>() == 40);
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Step>() == 64);

#[derive(Clone, Debug)]
pub(crate) enum Step {
    /// CPU time in the kernel on `path`, no lock.
    Delay(KernelPath, Ns),
    /// Take `locks[..n]` in order (spinning as needed), run `action`, hold for
    /// `hold` + whatever the action adds, release.
    Locked { locks: [LockId; 2], n: u8, got: u8, site: LockSite, hold: Ns, action: Action },
    /// A zero-time action without a lock.
    Do(Action),
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Ipi {
    Resched,
    WakeList,
    /// `kick_ilb`: run the idle load balancer.
    Balance,
    /// A delayed new task waits for this idle CPU's next `schedule()` (`delayed.rs`).
    Delayed,
}

/// An entry of the event queue. CPU numbers are `u32` (a machine has far fewer CPUs, checked
/// when it is built) so that every variant fits in 16 bytes and a queue entry in 32.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Event {
    /// The CPU's current delay, lock hold or user work ended.
    CpuDone {
        cpu: u32,
        gen: u64,
    },
    /// A lock was handed to this spinning CPU.
    Resume {
        cpu: u32,
    },
    Tick {
        cpu: u32,
        gen: u64,
    },
    /// The timer interrupt that wakes an idle CPU whose tick is stopped
    /// (`SchedClass::idle_wakeup`); `gen` is the CPU's `tick_gen` when it went idle.
    IdleWake {
        cpu: u32,
        gen: u64,
    },
    /// `cpu`'s clock event for its earliest hrtimer (see `hrtimer.rs`).
    Timer {
        cpu: u32,
        gen: u64,
    },
    Ipi {
        cpu: u32,
        kind: Ipi,
    },
    /// `cpu`'s policy timer (`Request::Timer`: `dl_timer`, the rt period timer, …).
    PolicyTimer {
        cpu: u32,
        gen: u64,
    },
    /// The workload's `[[change]]` number `idx` takes effect.
    Change {
        idx: u32,
    },
    /// Instance of workload template `template` starts; `left` more follow, each with the
    /// next sequence number after this event's own (`EventQueue::pop_with_seq`).
    Start {
        template: u32,
        left: u32,
    },
    /// An instance of `template` whose start the machine's noise delayed (`noise.rs`).
    StartLate {
        template: u32,
    },
}

// Keeps a queue entry at 32 bytes (see `schedlab_sim::EventQueue`).
const _: () = assert!(std::mem::size_of::<Event>() == 16);

/// Which user-space word a futex operation names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum FutexKey {
    Mutex(usize),
    Cond(usize),
    Barrier(usize),
    /// A `[[futex]]` word.
    Word(usize),
}

/// A futex action, run with its bucket lock(s) held (or, for the direct switch, the
/// runqueue lock).
#[derive(Clone, Debug)]
pub(crate) enum FAction {
    /// `futex_wait` on a word.
    Wait {
        task: TaskId,
        word: usize,
        expected: u32,
    },
    /// `futex_wake` with wake flags.
    Wake {
        key: FutexKey,
        n: u64,
        wf: u32,
    },
    /// `futex_swap(wait, expected, wake)`.
    Swap {
        task: TaskId,
        wait: usize,
        expected: u32,
        wake: usize,
        wf: u32,
        direct: bool,
    },
    WakeOp {
        word: usize,
        count: u32,
        word2: usize,
        count2: u32,
        op: WakeOpKind,
        oparg: u32,
        cmp: WakeCmp,
        cmparg: u32,
    },
    CmpRequeue {
        word: usize,
        to: usize,
        wake: u32,
        requeue: u32,
        expected: u32,
    },
    LockPi {
        task: TaskId,
        word: usize,
    },
    UnlockPi {
        task: TaskId,
        word: usize,
    },
    /// `prev` (asleep on a futex) hands its CPU to `next`, with the runqueue locked.
    DirectSwitch {
        prev: TaskId,
        next: TaskId,
        wf: u32,
    },
}

impl FAction {
    pub(crate) fn path(&self) -> KernelPath {
        match self {
            FAction::DirectSwitch { .. } => KernelPath::Schedule,
            _ => KernelPath::Futex,
        }
    }
}

/// The path of a lock-free action (a locked step's path comes from its site).
pub(crate) fn do_path(a: &Action) -> KernelPath {
    match a {
        Action::Schedule { .. } | Action::Yield { .. } => KernelPath::Schedule,
        Action::Tick | Action::PolicyTimer => KernelPath::Tick,
        Action::NohzBalance | Action::IdleWake => KernelPath::Balance,
        Action::MoveQueuedBatch(..)
        | Action::MoveQueued { .. }
        | Action::ActivateMoved { .. }
        | Action::DoubleLockBalance { .. }
        | Action::DetachBatch { .. }
        | Action::AttachBatch { .. } => KernelPath::Migrate,
        Action::TtwuStart { .. } | Action::TtwuRunnable { .. } | Action::TtwuActivate { .. } | Action::TtwuPending => {
            KernelPath::Wakeup
        }
        Action::ForkChild { .. }
        | Action::WakeUpNewTask { .. }
        | Action::WakeUpNewTaskTry { .. }
        | Action::Exit { .. }
        | Action::WaitChildren { .. } => KernelPath::ForkExit,
        Action::SetNice { .. } | Action::SetAffinity { .. } | Action::SetSlice { .. } | Action::SetPolicy(..) => {
            KernelPath::SchedSyscall
        }
        Action::SleepUntil { .. } => KernelPath::Timer,
        Action::PipeWrite { .. } | Action::PipeRead { .. } | Action::Poll { .. } => KernelPath::Pipe,
        Action::FutexWait { .. } | Action::FutexWake { .. } => KernelPath::Futex,
        Action::Futex(a) => a.path(),
    }
}
