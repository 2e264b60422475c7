//! rt-app's events (`doc/tutorial.txt`, "events"; `src/rt-app_parse_config.c:
//! parse_task_event_data`): each key's value checked and read into an [`Ev`].

use super::json::{Json, Spanned};
use super::model::Ev;
use super::Cx;
use schedlab_sim::SourceError;

type R<T> = Result<T, SourceError>;

impl Cx<'_> {
    /// The event of kind `kind` (an [`super::model::EVENTS`] prefix) with value `v`.
    pub(super) fn event(&mut self, kind: &str, v: &Spanned, f: &str) -> R<Ev> {
        Ok(match kind {
            // Renamed `nodes_membind` in rt-app 2020 because `mem` claims the key.
            "mem" if f.ends_with(".membind_nodes") && !matches!(v.v, Json::Int(_)) => {
                return Err(self.err(
                    v.at,
                    f,
                    "`membind_nodes` is read as a `mem` event (rt-app's events match by prefix); \
                     NUMA binding is `nodes_membind`",
                ))
            }
            "run" | "runtime" | "sleep" | "mem" | "iorun" => {
                let n = self.event_int(v, f)?;
                match kind {
                    "run" => Ev::Run(n),
                    "runtime" => Ev::Runtime(n),
                    "sleep" => Ev::Sleep(n),
                    "mem" => Ev::Mem(n),
                    _ => Ev::Iorun(n),
                }
            }
            "lock" => Ev::Lock(self.event_str(v, f)?),
            "unlock" => Ev::Unlock(self.event_str(v, f)?),
            "signal" => Ev::Signal(self.event_str(v, f)?),
            "broad" => Ev::Broad(self.event_str(v, f)?),
            "barrier" => Ev::Barrier(self.event_str(v, f)?),
            "fork" => Ev::Fork(self.event_str(v, f)?),
            "resume" => Ev::Resume(self.event_str(v, f)?),
            // rt-app suspends the thread on its own name and ignores the value, of any type
            // (`parse_task_event_data`: `ref = tdata->name`, since rt-app's 2025 change).
            "suspend" => Ev::Suspend,
            // `yield` takes any value (the tutorial: "String can be empty").
            "yield" => Ev::Yield,
            "wait" | "sync" => {
                let m = self.object(v, f)?;
                self.known_keys(m, &["ref", "mutex"], f, "a wait or sync event")?;
                // rt-app's defaults for a missing name: "unknown".
                let cond = self.opt_str(m, "ref", f)?.map_or("unknown".into(), |s| s.0);
                let mutex = self.opt_str(m, "mutex", f)?.map_or("unknown".into(), |s| s.0);
                if kind == "wait" {
                    Ev::Wait { cond, mutex }
                } else {
                    Ev::Sync { cond, mutex }
                }
            }
            _ => self.timer(v, f)?,
        })
    }

    /// `timer: { ref, period, mode }`: a `ref` starting with `unique` is the thread
    /// instance's own timer; any other name (default "unknown") is one timer shared by
    /// every thread naming it. `mode` `absolute` keeps the period grid after an overrun.
    fn timer(&mut self, v: &Spanned, f: &str) -> R<Ev> {
        let m = self.object(v, f)?;
        self.known_keys(m, &["ref", "period", "mode"], f, "a timer event")?;
        let name = self.opt_str(m, "ref", f)?.map_or("unknown".into(), |s| s.0);
        let period = self.opt_int(m, "period", f)?.map_or(0, |p| p.0);
        if period < 0 {
            return Err(self.err(v.at, &format!("{f}.period"), "period must be >= 0 (µs)"));
        }
        let absolute = match self.opt_str(m, "mode", f)? {
            None => false,
            Some((s, _)) if s == "relative" => false,
            Some((s, _)) if s == "absolute" => true,
            Some((s, at)) => {
                return Err(self.err(
                    at,
                    &format!("{f}.mode"),
                    format!("unknown mode `{s}`; expected relative or absolute"),
                ))
            }
        };
        Ok(Ev::Timer { unique: name.starts_with("unique"), name, period, absolute })
    }

    fn event_int(&mut self, v: &Spanned, f: &str) -> R<i64> {
        match v.v {
            Json::Int(_) => match self.int_value(v, f)? {
                n if n >= 0 => Ok(n),
                n => Err(self.err(v.at, f, format!("must be >= 0, found {n}"))),
            },
            _ => Err(self.err(v.at, f, format!("expected an integer (µs or bytes), found {}", v.v.kind()))),
        }
    }

    fn event_str(&self, v: &Spanned, f: &str) -> R<String> {
        match &v.v {
            Json::Str(s) => Ok(s.clone()),
            other => Err(self.err(v.at, f, format!("expected a resource name (a string), found {}", other.kind()))),
        }
    }
}
