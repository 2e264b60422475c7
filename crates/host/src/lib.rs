//! Real runs (`--sched host`): the workload executes on this machine's kernel.
pub mod objects;
pub mod procstat;
pub mod ringbuf;
pub mod sys;
pub mod tracefs;
